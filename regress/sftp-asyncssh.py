#!/usr/bin/python3
#
# sftp-asyncssh.py: another SFTP server that is not OpenSSH's, for the
# tests: asyncssh's SSH server with its own SFTP subsystem on 127.0.0.1,
# serving the local file system as the user running it (absolute paths).
#
# usage: sftp-asyncssh.py PORT-FILE HOST-KEY AUTHORIZED-PUBLIC-KEY
#
# It listens on a free port, writes the port to PORT-FILE and serves
# until killed.

import asyncio
import os
import sys
import warnings

warnings.simplefilter("ignore")
import asyncssh  # noqa: E402


async def serve(portfile, hostkey, authkeys):
    server = await asyncssh.listen(
        "127.0.0.1", 0, server_host_keys=[hostkey],
        authorized_client_keys=authkeys, sftp_factory=True,
        allow_scp=False)
    port = server.sockets[0].getsockname()[1]
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(portfile + ".tmp", portfile)
    await asyncio.Event().wait()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.stderr.write("usage: sftp-asyncssh.py PORT-FILE HOST-KEY "
                         "AUTHORIZED-PUBLIC-KEY\n")
        sys.exit(2)
    asyncio.run(serve(*sys.argv[1:]))
