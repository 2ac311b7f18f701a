#
# pyserver.py: what the tests' Python SSH servers (sftp-paramiko.py,
# kex-paramiko.py) share: a socket listening on a free port of 127.0.0.1,
# its port written to PORT-FILE (atomically: the tests wait for the file).

import os
import socket


def listen(portfile):
	"""A listening socket on 127.0.0.1; its port is in portfile."""
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("127.0.0.1", 0))
	s.listen(5)
	with open(portfile + ".tmp", "w") as f:
		f.write("%d\n" % s.getsockname()[1])
	os.rename(portfile + ".tmp", portfile)
	return s
