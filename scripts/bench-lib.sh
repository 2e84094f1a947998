# Shell functions the benchmark scripts share; sourced, not run.

# median: the median of the numbers on standard input (separated by spaces or lines; the upper
# middle one of an even count).
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
