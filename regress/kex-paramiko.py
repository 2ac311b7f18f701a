#!/usr/bin/python3
#
# kex-paramiko.py: an SSH server that is not OpenSSH but says it is, for
# the KEX guess's tests (t-kexguess.sh): paramiko's server on 127.0.0.1
# with the banner SSH-2.0-OpenSSH_10.5, whose first key exchange method
# changes between its KEXINITs as MODE says.  Each command, "cat PATH",
# sends the file PATH on stdout.  Like asyncssh's server, paramiko's
# takes the packet that follows a guessing KEXINIT whenever the method
# it chooses is the client's first, though RFC 4253 says to drop it
# where the server's first methods differ.
#
# usage: kex-paramiko.py MODE PORT-FILE HOST-KEY AUTHORIZED-PUBLIC-KEY
#
# MODE:
#   steady   curve25519-sha256@libssh.org first in every KEXINIT;
#   changed  that first in the first KEXINIT, ecdh-sha2-nistp256 in the
#            others: a client that guesses from the first has its guess
#            taken, though RFC 4253 says to drop it, and the exchange
#            fails (the case of asyncssh whose first method changed);
#   drop     curve25519-sha256@libssh.org first except in the KEXINIT
#            that answers the first one that guesses, whose guess is
#            then dropped as RFC 4253 says.
# It listens on a free port, writes the port to PORT-FILE, logs each
# KEXINIT it receives on stderr ("kexinit N: guess taken|dropped|none,
# first METHOD") and serves until killed.

import sys
import threading

import paramiko
from paramiko.common import AUTH_FAILED, AUTH_SUCCESSFUL, \
    OPEN_SUCCEEDED, OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

import pyserver

STEADY = ("curve25519-sha256@libssh.org", "ecdh-sha2-nistp256")
OTHER = ("ecdh-sha2-nistp256", "curve25519-sha256@libssh.org")


def kexinit_lists(m):
	"""The ten name-lists of KEXINIT message m and whether a guess
	follows, m left unread."""
	peek = paramiko.Message(m.asbytes())
	peek.get_bytes(16)
	lists = [peek.get_list() for _ in range(10)]
	return lists, peek.get_boolean()


class Transport(paramiko.Transport):
	mode = "steady"
	sent = 0
	received = 0
	dropped = False
	answer_guess = False

	def first_kex(self):
		"""The KEX methods of our next KEXINIT, in order."""
		if self.mode == "changed" and self.sent >= 2:
			return OTHER
		if self.mode == "drop" and self.answer_guess and \
		    not self.dropped:
			return OTHER
		return STEADY

	def _send_kex_init(self):
		self.sent += 1
		self._preferred_kex = self.first_kex()
		super()._send_kex_init()

	def _negotiate_keys(self, m):
		self.answer_guess = self.local_kex_init is None and \
		    kexinit_lists(m)[1]
		super()._negotiate_keys(m)

	# paramiko dispatches through a table of its functions.
	_handler_table = dict(paramiko.Transport._handler_table)
	_handler_table[paramiko.common.MSG_KEXINIT] = _negotiate_keys

	def _parse_kex_init(self, m):
		lists, follows = kexinit_lists(m)
		super()._parse_kex_init(m)
		self.received += 1
		what = "none"
		if follows:
			what = "taken"
			if self.mode == "drop" and (
			    lists[0][0] != self._preferred_kex[0] or
			    lists[1][0] != "ssh-ed25519"):
				what = "dropped"
				self.dropped = True
				self.drop_next()
		sys.stderr.write("kexinit %d: guess %s, first %s\n" %
		    (self.received, what, self._preferred_kex[0]))
		sys.stderr.flush()

	def drop_next(self):
		"""Ignores the key exchange packet that the client guessed."""
		engine = self.kex_engine
		parse = engine.parse_next

		def skip(ptype, m):
			engine.parse_next = parse
			self._expect_packet(ptype)
		engine.parse_next = skip


class Server(paramiko.ServerInterface):
	def __init__(self, key):
		self.key = key

	def get_allowed_auths(self, username):
		return "publickey"

	def check_auth_publickey(self, username, key):
		if key.get_base64() == self.key:
			return AUTH_SUCCESSFUL
		return AUTH_FAILED

	def check_channel_request(self, kind, chanid):
		if kind == "session":
			return OPEN_SUCCEEDED
		return OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

	def check_channel_exec_request(self, channel, command):
		threading.Thread(target=send_file, args=(channel, command),
		    daemon=True).start()
		return True


def send_file(chan, command):
	path = command.decode()
	if path.startswith("cat "):
		path = path[4:]
	try:
		with open(path, "rb") as f:
			while True:
				b = f.read(65536)
				if not b:
					break
				chan.sendall(b)
		chan.send_exit_status(0)
	except (OSError, UnicodeDecodeError) as e:
		chan.sendall_stderr(("%s\n" % e).encode())
		chan.send_exit_status(1)
	chan.close()


def serve(conn, mode, hostkey, userkey):
	t = Transport(conn)
	t.mode = mode
	t.local_version = "SSH-2.0-OpenSSH_10.5"
	t.add_server_key(hostkey)
	t.start_server(server=Server(userkey))


def main():
	if len(sys.argv) != 5 or sys.argv[1] not in ("steady", "changed",
	    "drop"):
		sys.stderr.write("usage: kex-paramiko.py steady|changed|drop "
		    "PORT-FILE HOST-KEY AUTHORIZED-PUBLIC-KEY\n")
		sys.exit(2)
	mode, portfile = sys.argv[1:3]
	hostkey = paramiko.Ed25519Key(filename=sys.argv[3])
	with open(sys.argv[4]) as f:
		userkey = f.read().split()[1]
	s = pyserver.listen(portfile)
	while True:
		conn, _ = s.accept()
		serve(conn, mode, hostkey, userkey)


if __name__ == "__main__":
	main()
