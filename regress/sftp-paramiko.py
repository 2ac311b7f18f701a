#!/usr/bin/python3
#
# sftp-paramiko.py: an SFTP server that is not OpenSSH's, for the tests:
# paramiko's SSH server and SFTP subsystem on 127.0.0.1, serving the local
# file system as the user running it.  It answers every request in the
# order it came and states no limits extension.
#
# usage: sftp-paramiko.py PORT-FILE HOST-KEY AUTHORIZED-PUBLIC-KEY
#
# It listens on a free port, writes the port to PORT-FILE and serves one
# connection at a time until killed.

import base64
import os
import sys
import threading

import paramiko
from paramiko import SFTPAttributes, SFTPHandle, SFTPServer, \
    SFTPServerInterface, SFTP_OK

import pyserver


def _err(e):
	return SFTPServer.convert_errno(e.errno)


def set_attr(path, attr):
	# paramiko's own set_file_attr() truncates the file to 0 before it
	# sets a size: do the size here.
	if attr._flags & attr.FLAG_SIZE:
		os.truncate(path, attr.st_size)
		attr._flags &= ~attr.FLAG_SIZE
	SFTPServer.set_file_attr(path, attr)


class Handle(SFTPHandle):
	def stat(self):
		try:
			return SFTPAttributes.from_stat(os.fstat(self.readfile.fileno()))
		except OSError as e:
			return _err(e)

	def chattr(self, attr):
		try:
			set_attr(self.filename, attr)
			return SFTP_OK
		except OSError as e:
			return _err(e)


class Files(SFTPServerInterface):
	def list_folder(self, path):
		try:
			out = []
			for name in os.listdir(path):
				a = SFTPAttributes.from_stat(
				    os.lstat(os.path.join(path, name)))
				a.filename = name
				out.append(a)
			return out
		except OSError as e:
			return _err(e)

	def stat(self, path):
		try:
			return SFTPAttributes.from_stat(os.stat(path))
		except OSError as e:
			return _err(e)

	def lstat(self, path):
		try:
			return SFTPAttributes.from_stat(os.lstat(path))
		except OSError as e:
			return _err(e)

	def open(self, path, flags, attr):
		try:
			mode = attr.st_mode if attr.st_mode is not None else 0o666
			fd = os.open(path, flags, mode & 0o7777)
		except OSError as e:
			return _err(e)
		if attr is not None and (flags & os.O_CREAT):
			attr._flags &= ~attr.FLAG_PERMISSIONS
			set_attr(path, attr)
		if flags & os.O_WRONLY:
			fstr = "ab" if flags & os.O_APPEND else "wb"
		elif flags & os.O_RDWR:
			fstr = "a+b" if flags & os.O_APPEND else "r+b"
		else:
			fstr = "rb"
		try:
			f = os.fdopen(fd, fstr, buffering=0)
		except OSError as e:
			return _err(e)
		h = Handle(flags)
		h.filename = path
		h.readfile = f
		h.writefile = f
		return h

	def remove(self, path):
		try:
			os.remove(path)
		except OSError as e:
			return _err(e)
		return SFTP_OK

	def rename(self, old, new):
		try:
			os.rename(old, new)
		except OSError as e:
			return _err(e)
		return SFTP_OK

	def mkdir(self, path, attr):
		try:
			os.mkdir(path)
			if attr is not None:
				set_attr(path, attr)
		except OSError as e:
			return _err(e)
		return SFTP_OK

	def rmdir(self, path):
		try:
			os.rmdir(path)
		except OSError as e:
			return _err(e)
		return SFTP_OK

	def chattr(self, path, attr):
		try:
			set_attr(path, attr)
		except OSError as e:
			return _err(e)
		return SFTP_OK

	def readlink(self, path):
		try:
			return os.readlink(path)
		except OSError as e:
			return _err(e)

	def canonicalize(self, path):
		return os.path.realpath(path if path else "/")


class Subsystem(SFTPServer):
	# The session ends with an exit status, as OpenSSH's does: scp
	# reports failure without one.
	def finish_subsystem(self):
		super().finish_subsystem()
		try:
			self.sock.send_exit_status(0)
		except Exception:
			pass


class Server(paramiko.ServerInterface):
	def __init__(self, key):
		self.key = key

	def check_auth_publickey(self, username, key):
		if key == self.key:
			return paramiko.AUTH_SUCCESSFUL
		return paramiko.AUTH_FAILED

	def get_allowed_auths(self, username):
		return "publickey"

	def check_channel_request(self, kind, chanid):
		if kind == "session":
			return paramiko.OPEN_SUCCEEDED
		return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED


def serve(conn, hostkey, userkey):
	t = paramiko.Transport(conn)
	t.add_server_key(hostkey)
	t.set_subsystem_handler("sftp", Subsystem, Files)
	t.start_server(server=Server(userkey))
	while t.is_active():
		t.join(1)


def main():
	portfile, hostkey, pub = sys.argv[1:4]
	hostkey = paramiko.Ed25519Key.from_private_key_file(hostkey)
	with open(pub) as f:
		kind, blob = f.read().split()[:2]
	userkey = paramiko.Ed25519Key(data=base64.b64decode(blob))
	s = pyserver.listen(portfile)
	while True:
		conn, _ = s.accept()
		threading.Thread(target=serve, args=(conn, hostkey, userkey),
		    daemon=True).start()


main()
