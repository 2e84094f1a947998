//! Which of AWS's S3 endpoints requests go to: FIPS, dual-stack, Transfer Acceleration and
//! us-east-1's regional host, from code, the environment and the profile, where botocore and
//! the AWS CLI read them. The hosts themselves are `slipstream_s3::Variants`' part.

use slipstream_s3::Variants;

use super::files::Profile;
use super::{ConfigError, Env};

/// Endpoint variants given in code (the Python `use_fips_endpoint=` and the rest); `None`
/// looks further down the chain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VariantChoices {
    /// FIPS endpoints, else `AWS_USE_FIPS_ENDPOINT`, the profile's `use_fips_endpoint`.
    pub fips: Option<bool>,
    /// Dual-stack endpoints, else the profile's `s3.use_dualstack_endpoint`,
    /// `AWS_USE_DUALSTACK_ENDPOINT`, the profile's `use_dualstack_endpoint`.
    pub dualstack: Option<bool>,
    /// Transfer Acceleration, else the profile's `s3.use_accelerate_endpoint`.
    pub accelerate: Option<bool>,
    /// us-east-1's regional host, else `AWS_S3_US_EAST_1_REGIONAL_ENDPOINT`, the profile's
    /// `s3_us_east_1_regional_endpoint` or `s3.us_east_1_regional_endpoint` (`regional` or
    /// `legacy`).
    pub regional_us_east_1: Option<bool>,
}

/// `region` without the `fips-` or `-fips` of a FIPS pseudo-region (`fips-us-east-1`,
/// `us-gov-west-1-fips`), and whether it had one: botocore strips it and turns FIPS on.
pub(super) fn strip_fips(region: String) -> (String, bool) {
    let stripped = region.replace("fips-", "").replace("-fips", "");
    let had = stripped != region;
    (stripped, had)
}

/// The variants asked for, checked against the region and endpoint so that a combination AWS
/// has no endpoint for fails before any request. Values that are neither `true` nor `false`
/// are refused, where botocore reads them as false: `AWS_USE_FIPS_ENDPOINT=1` silently not
/// using FIPS is the mistake this catches.
pub(super) fn variants(
    given: VariantChoices,
    env: &Env,
    profile: &Profile<'_>,
    fips_region: bool,
    region: &str,
    custom_endpoint: bool,
) -> Result<Variants, ConfigError> {
    let from_env = |name: &str| env.var(name).map(|v| (name.to_owned(), v));
    let from_profile = |key: &str| {
        profile
            .setting(key)
            .map(|v| (format!("{key} in {}", profile.config_file), v))
    };
    let fips = match given.fips {
        Some(f) => f || fips_region,
        None if fips_region => true,
        None => {
            flag(from_env("AWS_USE_FIPS_ENDPOINT").or_else(|| from_profile("use_fips_endpoint")))?
        }
    };
    let dualstack = match given.dualstack {
        Some(d) => d,
        // botocore: the profile's s3 setting when true, else the general one.
        None => match flag(from_profile("s3.use_dualstack_endpoint"))? {
            true => true,
            false => flag(
                from_env("AWS_USE_DUALSTACK_ENDPOINT")
                    .or_else(|| from_profile("use_dualstack_endpoint")),
            )?,
        },
    };
    let accelerate = match given.accelerate {
        Some(a) => a,
        None => flag(from_profile("s3.use_accelerate_endpoint"))?,
    };
    let regional_us_east_1 = match given.regional_us_east_1 {
        Some(r) => r,
        None => regional(
            from_env("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT")
                .or_else(|| from_profile("s3_us_east_1_regional_endpoint"))
                .or_else(|| from_profile("s3.us_east_1_regional_endpoint")),
        )?,
    };
    let variants = Variants {
        fips,
        dualstack,
        accelerate,
        regional_us_east_1,
    };
    variants
        .check(region, custom_endpoint)
        .map_err(|e| ConfigError::Invalid(e.to_string()))?;
    Ok(variants)
}

/// A boolean setting, `true` or `false` in any case; not set is false.
fn flag(setting: Option<(String, &str)>) -> Result<bool, ConfigError> {
    one_of(setting, "true", "false")
}

/// `regional` or `legacy` (botocore refuses anything else too); not set is legacy.
fn regional(setting: Option<(String, &str)>) -> Result<bool, ConfigError> {
    one_of(setting, "regional", "legacy")
}

/// A setting that takes one of two words, in any case: `yes` is true, `no` (or not set) false,
/// anything else refused with the setting's name.
fn one_of(setting: Option<(String, &str)>, yes: &str, no: &str) -> Result<bool, ConfigError> {
    match setting {
        None => Ok(false),
        Some((_, v)) if v.trim().eq_ignore_ascii_case(yes) => Ok(true),
        Some((_, v)) if v.trim().eq_ignore_ascii_case(no) => Ok(false),
        Some((name, v)) => Err(ConfigError::Invalid(format!(
            "{name} = {v:?}: give {yes} or {no}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{resolve, Overrides};
    use super::*;

    /// The variants and region the chain resolves from `vars` and a default profile `config`.
    fn at(
        vars: &[(&str, &str)],
        config: &str,
        given: VariantChoices,
    ) -> Result<(Variants, String), String> {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".aws")).unwrap();
        std::fs::write(home.path().join(".aws/config"), config).unwrap();
        let mut vars = vars.to_vec();
        vars.extend([("AWS_ACCESS_KEY_ID", "K"), ("AWS_SECRET_ACCESS_KEY", "s")]);
        let env = Env::new(&vars, Some(home.path().into()));
        let cli = Overrides {
            variants: given,
            ..Overrides::default()
        };
        resolve(&env, &cli)
            .map(|r| (r.variants, r.region))
            .map_err(|e| e.to_string())
    }

    const NONE: VariantChoices = VariantChoices {
        fips: None,
        dualstack: None,
        accelerate: None,
        regional_us_east_1: None,
    };

    #[test]
    fn each_setting_is_read_where_botocore_reads_it() {
        let on = |vars: &[(&str, &str)], config: &str| at(vars, config, NONE).unwrap().0;
        assert_eq!(on(&[], "[default]\n"), Variants::default());
        assert!(on(&[("AWS_USE_FIPS_ENDPOINT", "TRUE")], "").fips);
        assert!(on(&[], "[default]\nuse_fips_endpoint = true\n").fips);
        // The environment beats the profile.
        let fips_off = [("AWS_USE_FIPS_ENDPOINT", "false")];
        assert!(!on(&fips_off, "[default]\nuse_fips_endpoint = true\n").fips);
        assert!(on(&[("AWS_USE_DUALSTACK_ENDPOINT", "true")], "").dualstack);
        assert!(on(&[], "[default]\nuse_dualstack_endpoint = true\n").dualstack);
        // The profile's s3 setting, when true, beats the environment (botocore's order).
        let ds_off = [("AWS_USE_DUALSTACK_ENDPOINT", "false")];
        let s3_ds = "[default]\ns3 =\n  use_dualstack_endpoint = true\n";
        assert!(on(&ds_off, s3_ds).dualstack);
        let s3_acc = "[default]\ns3 =\n  use_accelerate_endpoint = true\n";
        assert!(on(&[], s3_acc).accelerate);
        let regional = [("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT", "regional")];
        assert!(on(&regional, "").regional_us_east_1);
        let nested = "[default]\ns3 =\n  us_east_1_regional_endpoint = regional\n";
        assert!(on(&[], nested).regional_us_east_1);
        let legacy = [("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT", "legacy")];
        assert!(
            !on(
                &legacy,
                "[default]\ns3_us_east_1_regional_endpoint = regional\n"
            )
            .regional_us_east_1
        );
    }

    #[test]
    fn code_beats_the_chain_and_a_fips_region_turns_fips_on() {
        let given = VariantChoices {
            fips: Some(false),
            accelerate: Some(true),
            ..NONE
        };
        let (v, _) = at(&[("AWS_USE_FIPS_ENDPOINT", "true")], "", given).unwrap();
        assert!(!v.fips && v.accelerate);
        for region in ["fips-us-east-1", "us-gov-west-1-fips"] {
            let (v, stripped) = at(&[("AWS_REGION", region)], "", NONE).unwrap();
            assert!(v.fips, "{region}");
            assert!(!stripped.contains("fips"), "{stripped}");
        }
    }

    #[test]
    fn unclear_values_and_impossible_combinations_are_refused() {
        let refused = |vars: &[(&str, &str)], config: &str| at(vars, config, NONE).unwrap_err();
        let e = refused(&[("AWS_USE_FIPS_ENDPOINT", "1")], "");
        assert!(
            e.contains("AWS_USE_FIPS_ENDPOINT = \"1\": give true or false"),
            "{e}"
        );
        let e = refused(&[], "[default]\ns3 =\n  use_accelerate_endpoint = on\n");
        assert!(e.contains("s3.use_accelerate_endpoint in "), "{e}");
        let e = refused(&[("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT", "global")], "");
        assert!(e.contains("give regional or legacy"), "{e}");
        let accelerate_fips = [("AWS_USE_FIPS_ENDPOINT", "true")];
        let e = refused(
            &accelerate_fips,
            "[default]\ns3 =\n  use_accelerate_endpoint = true\n",
        );
        assert!(e.contains("cannot be used with FIPS"), "{e}");
        let custom = [("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")];
        let e = refused(
            &custom,
            "[default]\ns3 =\n  use_accelerate_endpoint = true\n",
        );
        assert!(e.contains("custom endpoint"), "{e}");
        let china = [
            ("AWS_REGION", "cn-north-1"),
            ("AWS_USE_FIPS_ENDPOINT", "true"),
        ];
        assert!(refused(&china, "").contains("no FIPS endpoints"));
    }
}
