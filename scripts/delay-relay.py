#!/usr/bin/env python3
"""A TCP relay that holds every chunk for DELAY_MS in each direction: a server one round trip
of 2 x DELAY_MS away, on loopback, without namespaces (for a database the wan script's
namespaces do not reach). Order is kept (every chunk waits the same time); bytes are passed
as they are (TLS goes through). Prints the port it listens on, then runs until killed.

    scripts/delay-relay.py UPSTREAM_HOST:PORT DELAY_MS
"""

import asyncio
import sys


async def pipe(reader, writer, delay):
    loop = asyncio.get_running_loop()
    while data := await reader.read(65536):
        loop.call_later(delay, writer.write, data)
    loop.call_later(delay, writer.close)


async def main():
    host, port = sys.argv[1].rsplit(":", 1)
    delay = float(sys.argv[2]) / 1000

    async def serve(client_reader, client_writer):
        server_reader, server_writer = await asyncio.open_connection(host, int(port))
        await asyncio.gather(pipe(client_reader, server_writer, delay),
                             pipe(server_reader, client_writer, delay),
                             return_exceptions=True)

    relay = await asyncio.start_server(serve, "127.0.0.1", 0)
    print(relay.sockets[0].getsockname()[1], flush=True)
    async with relay:
        await relay.serve_forever()


asyncio.run(main())
