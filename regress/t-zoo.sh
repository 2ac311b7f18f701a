#!/bin/sh
#
# t-zoo.sh: scp and sftp, ours beside the unpatched twin, against real
# SFTP servers that are not OpenSSH's, each started here on loopback or
# through -D:
#   gosftp-server, gosftp-request  Go's github.com/pkg/sftp, its own file
#       server and its request server (regress/zoo/gosftp): it runs one
#       file's reads and writes on threads, beside its other requests
#   erlang  Erlang/OTP's ssh daemon with ssh_sftpd (Debian's erlang-ssh):
#       it hands out a handle still in use once two are open
#   proftpd-restart-on, proftpd-restart-off  ProFTPD's mod_sftp (Debian's
#       proftpd-core, proftpd-mod-crypto) with AllowStoreRestart on, off
#   mina  Apache MINA SSHD 2.20 with sshd-sftp (regress/zoo/mina, Maven)
# Each case of many files ZOO_ROUNDS times (races show only sometimes):
# put -r, get -r,
# scp -r both ways (and again, ours over three SFTP sessions: -X
# streams=3, a channel each through ssh's control socket, or the -D
# server run three times; against ProFTPD, which serves one session per
# connection, -X connections=3 -X streams=3), over a destination whose files are longer than their
# sources, of a tree with sizes at every 32 KiB edge and one file of
# several MiB, and that file alone by scp both ways; once, a file of 20
# MiB alone by scp both ways over three sessions (split into parts that
# each session writes or reads by offset, with a handle of its own); put -r -p (times
# kept); put -a -r and get -a -r over every file's first half; resume
# (reget, reput, scp -Z) of
# a correct part, and scp -Z of a target absent or already whole (where
# the server cannot hash, copied whole and trusted); reget, reput and
# scp -Z over a part that differs: whole, and said, where the server
# hashes (MINA states check-file in "supported2" and sends its hash as a
# string; ProFTPD answers it unlisted and leaves out "check-file"), else
# the file stock's reget and reput leave.  Where the server's
# policy refuses appends (ProFTPD's AllowStoreRestart off), an upload's
# resume is refused, as stock's reput is, and leaves the target as it was.  Asserted each time: the exit status is stock's (for
# scp -Z, that of stock's scp copying the file whole: Erlang's server
# sends no exit status, so scp exits 1 with either), and no file
# differs from its source where the copy exited 0.  The single-file
# cases (resume, scp -Z, the 20 MiB file) and put -r -p run once, in the
# first round.  A server that cannot run here is a skip with its reason.

. "`dirname "$0"`/lib.sh"

ZOO_ROUNDS="${ZOO_ROUNDS:-3}"
ZOO_TIMEOUT="${ZOO_TIMEOUT:-120}"

# The tree: sizes around each 32 KiB edge, three levels, and a big file.
zoo_tree() {
	_n=0
	for _d in src src/a src/a/b; do
		mkdir -p "$TESTDIR/$_d"
		for _s in 0 1 32767 32768 32769 65535 65536 65537 98305 \
		    131072 262143 1048577; do
			head -c $_s /dev/urandom >"$TESTDIR/$_d/f$_n"
			_n=`expr $_n + 1`
		done
	done
	head -c 6291459 /dev/urandom >"$TESTDIR/src/a/big"
	head -c 20971525 /dev/urandom >"$TESTDIR/huge"
	# The destination before: every directory, and each file longer
	# than its source.
	rm -rf "$TESTDIR/before"
	mkdir -p "$TESTDIR/before"
	(cd "$TESTDIR" && find src -type d) |
	    (cd "$TESTDIR/before" && xargs mkdir -p)
	(cd "$TESTDIR" && find src -type f) | while read -r _f; do
		_s=`wc -c <"$TESTDIR/$_f"`
		head -c `expr $_s + 70001` /dev/zero | tr '\0' o \
		    >"$TESTDIR/before/$_f"
	done
	head -c 21000000 /dev/zero | tr '\0' o >"$TESTDIR/before/src/a/huge"
}

# zoo_bad DST: the files of src/ that DST/src lacks or has otherwise.
zoo_bad() {
	(cd "$TESTDIR/src" && find . -type f) | while read -r _f; do
		cmp -s "$TESTDIR/src/$_f" "$1/src/$_f" || echo "$_f"
	done
}

# zoo_run WHO SERVER MODE: WHO's client (hpn or stock) copies in MODE
# with SERVER; exit status in $TESTDIR/rc.WHO, messages in err.WHO, the
# destination (a fresh copy of before/, or of src/ for uploads' source
# side) in $TESTDIR/dst.WHO.
zoo_run() {
	# A mode ending in -s: ours over three SFTP sessions (-X streams);
	# ProFTPD's mod_sftp serves one SFTP session per connection (a
	# second one, even after the first ended, stalls and ends the
	# connection, with stock's sftp too): three connections there,
	# and no session beyond them.
	_x=""
	case $3:$2 in
	*-s:proftpd-*)	[ $1 = stock ] || _x="-X connections=3 -X streams=3"
			set -- "$1" "$2" "${3%-s}" ;;
	*-s:*)		[ $1 = stock ] || _x="-X streams=3"
			set -- "$1" "$2" "${3%-s}" ;;
	esac
	_b=`zoo_build $1`
	_d="$TESTDIR/dst.$1"
	rm -rf "$_d"
	case $3 in
	get-r|scp-down-r)	mkdir -p "$_d" ;;
	*)			cp -a "$TESTDIR/before" "$_d" ;;
	esac
	_host=""
	case $3 in
	put-a|get-a)
		# Every file's first half at the destination: a part to resume.
		rm -rf "$_d"
		mkdir -p "$_d"
		(cd "$TESTDIR" && find src -type d) | (cd "$_d" && xargs mkdir -p)
		(cd "$TESTDIR" && find src -type f) | while read -r _f; do
			head -c $(( `wc -c <"$TESTDIR/$_f"` / 2 )) \
			    "$TESTDIR/$_f" >"$_d/$_f"
		done
		;;
	esac
	case $2 in
	gosftp-*)
		set -- "$@" -D "$TESTDIR/$2"
		;;
	*)
		set -- "$@" -S "$_b/ssh" -F "$TESTDIR/zoo_ssh_config.$2"
		_host=zoo
		;;
	esac
	_who=$1
	_mode=$3
	shift 3
	set -- "$@" $_x
	case $_mode in
	put-r)	_c="put -r $TESTDIR/src $_d" ;;
	put-rp)	_c="put -r -p $TESTDIR/src $_d" ;;
	get-r)	_c="get -r $TESTDIR/src $_d" ;;
	put-a)	_c="put -a -r $TESTDIR/src $_d" ;;
	get-a)	_c="get -a -r $TESTDIR/src $_d" ;;
	reget*)	_c="reget $TESTDIR/src/a/big $_d/src/a/big" ;;
	reput*)	_c="reput $TESTDIR/src/a/big $_d/src/a/big" ;;
	*)	_c="" ;;
	esac
	case $_mode in
	reget|reput|scp-z-up|scp-z-down)
		# A correct part: the first 2,000,000 bytes of the source.
		head -c 2000000 "$TESTDIR/src/a/big" >"$_d/src/a/big"
		;;
	*-wrong)
		# A part that differs from the source at byte 1,000,000.
		head -c 2000000 "$TESTDIR/src/a/big" >"$_d/src/a/big"
		printf X | dd of="$_d/src/a/big" bs=1 seek=1000000 \
		    conv=notrunc 2>/dev/null
		;;
	scp-z-absent)
		rm -f "$_d/src/a/big" ;;
	scp-z-whole)
		cp "$TESTDIR/src/a/big" "$_d/src/a/big" ;;
	esac
	# Stock's scp has no -Z: it copies the file whole.
	_z=-Z
	[ $_who = hpn ] || _z=""
	if [ -n "$_c" ]; then
		echo "$_c" >"$TESTDIR/batch.$_who"
		timeout -s INT -k 5 $ZOO_TIMEOUT "$_b/sftp" "$@" \
		    -b "$TESTDIR/batch.$_who" $_host \
		    >"$TESTDIR/out.$_who" 2>"$TESTDIR/err.$_who"
	else
		case $_mode in
		scp-up-r)	set -- "$@" -r "$TESTDIR/src" "zoo:$_d/" ;;
		scp-up-big)	set -- "$@" "$TESTDIR/src/a/big" \
				    "zoo:$_d/src/a/big" ;;
		scp-down-big)	set -- "$@" "zoo:$TESTDIR/src/a/big" \
				    "$_d/src/a/big" ;;
		scp-up-huge)	set -- "$@" "$TESTDIR/huge" \
				    "zoo:$_d/src/a/huge" ;;
		scp-down-huge)	set -- "$@" "zoo:$TESTDIR/huge" \
				    "$_d/src/a/huge" ;;
		scp-down-r)	set -- "$@" -r "zoo:$TESTDIR/src" "$_d/" ;;
		scp-z-up|scp-z-absent|scp-z-whole|scp-z-wrong)
				set -- "$@" $_z "$TESTDIR/src/a/big" \
				    "zoo:$_d/src/a/big" ;;
		scp-z-down)	set -- "$@" $_z "zoo:$TESTDIR/src/a/big" \
				    "$_d/src/a/big" ;;
		esac
		timeout -s INT -k 5 $ZOO_TIMEOUT "$_b/scp" -q "$@" \
		    >"$TESTDIR/out.$_who" 2>"$TESTDIR/err.$_who"
	fi
	echo $? >"$TESTDIR/rc.$_who"
}

zoo_build() {
	case $1 in
	hpn)	echo "$HPN_BUILD" ;;
	*)	echo "$STOCK_BUILD" ;;
	esac
}

# zoo_case SERVER MODE ROUND: ours beside stock; the same exit status,
# and nothing that differs from its source where ours exited 0.
zoo_case() {
	_name="$1/$2/$3"
	zoo_run stock "$1" "$2"
	zoo_run hpn "$1" "$2"
	_rh=`cat "$TESTDIR/rc.hpn"`
	_rs=`cat "$TESTDIR/rc.stock"`
	_why=""
	_refused=no
	case $1/$2 in
	proftpd-restart-off/reput*|proftpd-restart-off/scp-z-up|\
	proftpd-restart-off/scp-z-whole|proftpd-restart-off/scp-z-wrong)
		_refused=yes
		# An append refused by the server's policy, as stock's reput
		# is: the target as it was.
		[ "$_rh" != 0 ] || _why="exit status 0 past AllowStoreRestart off"
		case $2 in
		scp-z-whole)	cp "$TESTDIR/src/a/big" "$TESTDIR/part" ;;
		*)		head -c 2000000 "$TESTDIR/src/a/big" \
				    >"$TESTDIR/part" ;;
		esac
		case $2 in
		*-wrong)	printf X | dd of="$TESTDIR/part" bs=1 \
				    seek=1000000 conv=notrunc 2>/dev/null ;;
		esac
		cmp -s "$TESTDIR/part" "$TESTDIR/dst.hpn/src/a/big" ||
		    _why="$_why the target changed"
		;;
	*/put-a|*/get-a)
		# Where the server hashes, a part of the same size as its
		# source is verified whole, where stock refuses it ("same
		# size or larger"): ours must copy every file, unless the
		# server's policy refuses resumes.
		if zoo_hashes $1 && [ $1 != proftpd-restart-off ]; then
			[ "$_rh" = 0 ] || _why="exit status $_rh"
		else
			[ "$_rh" = "$_rs" ] ||
			    _why="exit status $_rh, stock's $_rs"
		fi
		;;
	*)
		[ "$_rh" = "$_rs" ] || _why="exit status $_rh, stock's $_rs"
		;;
	esac
	case $_refused/$2 in
	yes/*)
		;;
	*-wrong)
		# Verified where the server hashes: whole; else trusted from
		# its size, as stock's reget and reput trust it.
		if zoo_hashes $1; then
			cmp -s "$TESTDIR/src/a/big" \
			    "$TESTDIR/dst.hpn/src/a/big" ||
			    _why="$_why src/a/big differs"
			grep -q 'differs from the source' "$TESTDIR/err.hpn" ||
			    grep -q 'differs from the source' \
			    "$TESTDIR/out.hpn" ||
			    _why="$_why no word of the part that differs"
		else
			cmp -s "$TESTDIR/dst.stock/src/a/big" \
			    "$TESTDIR/dst.hpn/src/a/big" ||
			    _why="$_why src/a/big is not stock's"
		fi
		;;
	*/reget|*/reput|*/scp-z-*|*/scp-*-big)
		cmp -s "$TESTDIR/src/a/big" "$TESTDIR/dst.hpn/src/a/big" ||
		    _why="$_why src/a/big differs"
		;;
	*/scp-*-huge-s)
		cmp -s "$TESTDIR/huge" "$TESTDIR/dst.hpn/src/a/huge" ||
		    _why="$_why src/a/huge differs"
		;;
	*)
		if [ "$_rh" = 0 ]; then
			_bad=`zoo_bad "$TESTDIR/dst.hpn" | wc -l`
			[ "$_bad" -eq 0 ] ||
			    _why="$_why $_bad files differ, exit 0:`zoo_bad \
			    "$TESTDIR/dst.hpn" | head -n 3 | tr '\n' ' '`"
		fi
		;;
	esac
	# -p: the times of the files, as the source's.
	if [ $2 = put-rp ] && [ -z "$_why" ]; then
		for _f in src/f0 src/a/big src/a/b/f30; do
			[ "`stat -c %Y "$TESTDIR/$_f"`" = \
			    "`stat -c %Y "$TESTDIR/dst.hpn/$_f"`" ] ||
			    _why="$_why $_f's time not kept"
		done
	fi
	if [ -z "$_why" ]; then
		pass "$_name"
	else
		fail "$_name" "$_why (`grep -v 'post-quantum\|store now\|upgraded' \
		    "$TESTDIR/err.hpn" | head -n 2 | tr '\n' ' '`)"
	fi
}

# zoo_hashes SERVER: whether it answers check-file (verified resume).
zoo_hashes() {
	case " $ZOO_HASHING " in
	*" $1 "*)	return 0 ;;
	esac
	return 1
}
ZOO_HASHING="mina proftpd-restart-on proftpd-restart-off"

zoo_server() {
	_r=1
	while [ $_r -le $ZOO_ROUNDS ]; do
		for _m in $ZOO_MODES; do
			# scp -Z over a part that differs: stock's scp copies
			# whole, ours trusts it where the server cannot hash.
			[ $_m != scp-z-wrong ] || zoo_hashes $1 || continue
			# Rounds are for the races of many requests and files
			# in flight; the parts' cases and the single-file
			# resume cases, whose requests a round does not
			# reorder differently, once.
			case $_r/$_m in
			1/*)		;;
			*/*-huge-s|*/reget*|*/reput*|*/scp-z-*|*/put-rp)
					continue ;;
			esac
			zoo_case "$1" $_m $_r
		done
		_r=`expr $_r + 1`
	done
}

zoo_tree
# Times a second apart from now, for -p.
touch -d '2001-02-03 04:05:06' "$TESTDIR/src/f0" "$TESTDIR/src/a/big" \
    "$TESTDIR/src/a/b/f30"
ZOO_MODES="${ZOO_MODES:-put-r get-r scp-up-r scp-down-r put-rp scp-up-big
	scp-down-big put-a get-a reget reput scp-z-up scp-z-down scp-z-absent
	scp-z-whole reget-wrong reput-wrong scp-z-wrong put-r-s get-r-s
	scp-up-r-s scp-down-r-s scp-up-huge-s scp-down-huge-s}"
# Elsewhere than on the default release, each case once.
! other_release || ZOO_ROUNDS=1

# Go's pkg/sftp: built here from regress/zoo/gosftp (the module from the
# Go proxy, or the module cache).
GO=`command -v go || echo /usr/local/go/bin/go`
if [ ! -x "$GO" ]; then
	skip gosftp "no Go toolchain (install golang-go)"
elif ! (cd "$HPN_TOP/regress/zoo/gosftp" &&
    GOFLAGS=-mod=mod "$GO" build -o "$TESTDIR/gosftp" . \
    >"$TESTDIR/gobuild.log" 2>&1); then
	skip gosftp "cannot build regress/zoo/gosftp: `tail -n 1 \
	    "$TESTDIR/gobuild.log"`"
else
	for _m in server request; do
		printf '#!/bin/sh\nexec %s %s\n' "$TESTDIR/gosftp" $_m \
		    >"$TESTDIR/gosftp-$_m"
		chmod 755 "$TESTDIR/gosftp-$_m"
		zoo_server gosftp-$_m
	done
fi

# zoo_ssh_config SERVER PORT KEY: how ssh reaches SERVER as "zoo".
zoo_ssh_config() {
	cat >"$TESTDIR/zoo_ssh_config.$1" <<EOF
Host zoo
	HostName 127.0.0.1
	Port $2
	User $USER
	IdentityFile $3
	IdentitiesOnly yes
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	BatchMode yes
	LogLevel ERROR
EOF
}

# zoo_daemon SERVER LOG PID: once LOG says the server listens (it has a
# line matching $ZOO_READY), the cases against it; else a skip with the
# log's last line.  Then the server is stopped.
zoo_daemon() {
	hpn_track_pid $3
	if wait_until 30 grep -qs "$ZOO_READY" "$2"; then
		zoo_server $1
	else
		skip $1 "the server did not start: `tail -n 1 "$2"`"
	fi
	kill $3 2>/dev/null
	wait $3 2>/dev/null
	hpn_untrack_pid $3
}

# Erlang/OTP's ssh_sftpd, on a free port, with RSA keys of its own.
if ! command -v escript >/dev/null 2>&1; then
	skip erlang "no escript (install erlang-ssh)"
else
	mkdir -p "$TESTDIR/erl/sys" "$TESTDIR/erl/user"
	"$HPN_BUILD/ssh-keygen" -q -t rsa -b 2048 -m PEM -N '' \
	    -f "$TESTDIR/erl/sys/ssh_host_rsa_key" &&
	"$HPN_BUILD/ssh-keygen" -q -t rsa -b 2048 -m PEM -N '' \
	    -f "$TESTDIR/erl/id_rsa" ||
	    die "ssh-keygen for the Erlang server failed"
	cp "$TESTDIR/erl/id_rsa.pub" "$TESTDIR/erl/user/authorized_keys"
	_port=`hpn_free_port`
	zoo_ssh_config erlang $_port "$TESTDIR/erl/id_rsa"
	escript "$HPN_TOP/regress/zoo/erlang-sftpd.escript" $_port \
	    "$TESTDIR/erl/sys" "$TESTDIR/erl/user" >"$TESTDIR/erl.log" 2>&1 &
	ZOO_READY='^ready' zoo_daemon erlang "$TESTDIR/erl.log" $!
fi

# ProFTPD's mod_sftp (Debian's proftpd-core and proftpd-mod-crypto), as
# root (it logs in as the user running it), with AllowStoreRestart on
# and off: an append (stock's reput) is refused where it is off.
PROFTPD=`command -v proftpd || echo /usr/sbin/proftpd`
if [ ! -x "$PROFTPD" ] || [ ! -f /usr/lib/proftpd/mod_sftp.so ]; then
	skip proftpd "no proftpd with mod_sftp (install proftpd-core and proftpd-mod-crypto)"
elif [ "`id -u`" != 0 ]; then
	skip proftpd "needs root: mod_sftp logs in as the user running it"
else
	_pf="$TESTDIR/pf"
	mkdir -p "$_pf"
	"$HPN_BUILD/ssh-keygen" -q -t rsa -b 2048 -m PEM -N '' \
	    -f "$_pf/hostkey" &&
	"$HPN_BUILD/ssh-keygen" -q -t ed25519 -N '' -f "$_pf/id" &&
	"$HPN_BUILD/ssh-keygen" -e -f "$_pf/id.pub" >"$_pf/authkeys" ||
	    die "ssh-keygen for ProFTPD failed"
	for _r in on off; do
		_port=`hpn_free_port`
		zoo_ssh_config proftpd-restart-$_r $_port "$_pf/id"
		cat >"$_pf/$_r.conf" <<EOF
ServerType standalone
DefaultAddress 127.0.0.1
SocketBindTight on
UseIPv6 off
LoadModule mod_sftp.c
User $USER
Group `id -gn`
RootLogin on
UseFtpUsers off
RequireValidShell off
WtmpLog off
UseReverseDNS off
PidFile $_pf/$_r.pid
ScoreboardFile $_pf/$_r.scoreboard
DelayTable none
SystemLog $_pf/$_r.log
TransferLog none
Port $_port
SFTPEngine on
SFTPLog $_pf/$_r.sftp.log
SFTPHostKey $_pf/hostkey
SFTPAuthMethods publickey
SFTPAuthorizedUserKeys file:$_pf/authkeys
SFTPCompression off
AllowOverwrite on
AllowStoreRestart $_r
EOF
		"$PROFTPD" -n -c "$_pf/$_r.conf" >"$_pf/$_r.out" 2>&1 &
		ZOO_READY='STARTUP' zoo_daemon proftpd-restart-$_r \
		    "$_pf/$_r.out" $!
	done
fi

# Apache MINA SSHD with sshd-sftp (regress/zoo/mina, built with Maven
# from Maven Central's artifacts), with an ECDSA user key.
if ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
	skip mina "no Maven or Java (install maven and default-jdk-headless)"
elif ! (cd "$HPN_TOP/regress/zoo/mina" && mvn -q -B -o package \
    >"$TESTDIR/mvn.log" 2>&1 || mvn -q -B package >"$TESTDIR/mvn.log" 2>&1)
then
	skip mina "cannot build regress/zoo/mina: `grep ERROR "$TESTDIR/mvn.log" |
	    head -n 1`"
else
	_m="$TESTDIR/mina"
	mkdir -p "$_m"
	"$HPN_BUILD/ssh-keygen" -q -t ecdsa -b 256 -N '' -f "$_m/id" ||
	    die "ssh-keygen for MINA failed"
	cp "$_m/id.pub" "$_m/authorized_keys"
	_port=`hpn_free_port`
	zoo_ssh_config mina $_port "$_m/id"
	_t="$HPN_TOP/regress/zoo/mina/target"
	java -cp "$_t/mina-sftpd.jar:$_t/lib/*" regress.MinaSftpd $_port \
	    "$_m/hostkey" "$_m/authorized_keys" >"$_m/log" 2>&1 &
	ZOO_READY='^ready' zoo_daemon mina "$_m/log" $!
fi
