#!/bin/sh
#
# lib-sftp.sh: the patched and the unpatched scp and sftp side by side
# against regress/sftp-adversary.py, an SFTP server that behaves legally
# but unlike OpenSSH's (served through -D: no sshd).  For t-sftpadv.sh
# and t-sftpfuzz.sh; sourced after lib.sh.
#
# Each copy starts from the same destination ($TESTDIR/before: old
# contents under some of the names) and copies $TESTDIR/src (or the two
# files $TESTDIR/dup/*/f of one name) with one of ADV_MODES.

ADV="$HPN_TOP/regress/sftp-adversary.py"
# A copy that takes longer has hung: SIGINT, then SIGKILL.
ADV_TIMEOUT="${ADV_TIMEOUT:-60}"
[ -x /usr/bin/python3 ] || { skip "$SUITE" "no /usr/bin/python3"; exit 0; }

ADV_MODES="sftp-get-r sftp-put-r sftp-get-rp sftp-put-rp sftp-get-glob
	sftp-put-glob sftp-get-one sftp-get-ra sftp-put-ra scp-down-r scp-up-r
	scp-down-rp scp-up-rp scp-down-glob scp-up-args scp-up-one scp-down-one
	sftp-get-dup sftp-put-dup scp-down-dup scp-up-dup"

# adv_setup SEED NFILES: the source tree, the destination's old files
# (every third name of the tree, of another size) and the two sources
# of one name (200000 bytes of A, then 1000 of B).
adv_setup() {
	rm -rf "$TESTDIR/src" "$TESTDIR/before" "$TESTDIR/dup"
	/usr/bin/python3 "$ADV" tree "$TESTDIR/src" "$1" "$2" ||
	    die "cannot make the test tree"
	mkdir -p "$TESTDIR/before/src" "$TESTDIR/dup/a" "$TESTDIR/dup/b"
	(cd "$TESTDIR/src" && find . -type d) | (cd "$TESTDIR/before/src" &&
	    xargs mkdir -p)
	(cd "$TESTDIR/src" && find . -type f | LC_ALL=C sort) |
	    awk 'NR % 3 == 0' | while read -r _f; do
		head -c $(( ${#_f} * 1000 + 7 )) /dev/zero |
		    tr '\0' o >"$TESTDIR/before/src/$_f"
	done
	head -c 200000 /dev/zero | tr '\0' A >"$TESTDIR/dup/a/f"
	head -c 1000 /dev/zero | tr '\0' B >"$TESTDIR/dup/b/f"
	echo old >"$TESTDIR/before/f"
}

# adv_build WHO: the build of the patched (hpn) or unpatched client.
adv_build() {
	case $1 in
	hpn)	echo "$HPN_BUILD" ;;
	*)	echo "$STOCK_BUILD" ;;
	esac
}

# adv_dir MODE: up or down.
adv_dir() {
	case $1 in
	*-put-*|*-up-*)	echo up ;;
	*)		echo down ;;
	esac
}

# adv_copy WHO MODE SWITCHES: WHO's client (hpn or stock) copies in MODE
# against the adversary run with SWITCHES, into $TESTDIR/dst.WHO (made
# from before/ first); its exit status in rc.WHO, its messages in err.WHO.
adv_copy() {
	_aw="$1"
	_asw="$3"
	_ab=`adv_build $1`
	_ad="$TESTDIR/dst.$1"
	_as="$TESTDIR/src"
	rm -rf "$_ad"
	cp -a "$TESTDIR/before" "$_ad"
	_sftp=""
	set -- "$1" "$2" "$3" "$_ab/scp" -q -D "$ADV"
	case $2 in
	sftp-get-r)	_sftp="get -r $_as $_ad" ;;
	sftp-put-r)	_sftp="put -r $_as $_ad" ;;
	sftp-get-rp)	_sftp="get -r -p $_as $_ad" ;;
	sftp-put-rp)	_sftp="put -r -p $_as $_ad" ;;
	sftp-get-glob)	_sftp="get $_as/f* $_ad/src/" ;;
	sftp-put-glob)	_sftp="put $_as/f* $_ad/src/" ;;
	sftp-get-one)	_sftp="get $_as/f0 $_ad/src/f0" ;;
	sftp-get-ra)	_sftp="get -a -r $_as $_ad" ;;
	sftp-put-ra)	_sftp="put -a -r $_as $_ad" ;;
	sftp-get-dup)	_sftp="get $TESTDIR/dup/*/f $_ad/" ;;
	sftp-put-dup)	_sftp="put $TESTDIR/dup/*/f $_ad/" ;;
	scp-down-r)	set -- "$@" -r "x:$_as" "$_ad" ;;
	scp-up-r)	set -- "$@" -r "$_as" "x:$_ad" ;;
	scp-down-rp)	set -- "$@" -r -p "x:$_as" "$_ad" ;;
	scp-up-rp)	set -- "$@" -r -p "$_as" "x:$_ad" ;;
	scp-down-glob)	set -- "$@" "x:$_as/f*" "$_ad/src/" ;;
	scp-up-args)	set -- "$@" "$_as"/f* "x:$_ad/src/" ;;
	scp-up-one)	set -- "$@" "$_as/f0" "x:$_ad/src/f0" ;;
	scp-down-one)	set -- "$@" "x:$_as/f0" "$_ad/src/f0" ;;
	scp-down-dup)	set -- "$@" "x:$TESTDIR/dup/*/f" "$_ad/" ;;
	scp-up-dup)	set -- "$@" "$TESTDIR/dup"/*/f "x:$_ad/" ;;
	*)		die "adv_copy: no mode $2" ;;
	esac
	if [ -n "$_sftp" ]; then
		echo "$_sftp" >"$TESTDIR/batch"
		HPN_ADVERSARY="$_asw" timeout -s INT -k 5 $ADV_TIMEOUT \
		    "$_ab/sftp" -D "$ADV" -b "$TESTDIR/batch" \
		    >"$TESTDIR/out.$_aw" 2>"$TESTDIR/err.$_aw"
	else
		shift 3
		HPN_ADVERSARY="$_asw" timeout -s INT -k 5 $ADV_TIMEOUT \
		    "$@" >"$TESTDIR/out.$_aw" 2>"$TESTDIR/err.$_aw"
	fi
	echo $? >"$TESTDIR/rc.$_aw"
}

# sftp_interrupt PID: SIGINT to each sftp among PID's descendants (scp
# dies at once on SIGINT, as it always has: it is left alone).
sftp_interrupt() {
	for _p in `descendants $1`; do
		if [ "`cat /proc/$_p/comm 2>/dev/null`" = sftp ]; then
			kill -INT $_p
		fi
	done
}

# adv_done NAME: after adv_copy hpn, if the copy exited 0 (it was done
# before a drop or an interrupt reached it), no file failed: checked as
# NAME, and true.  False, checking nothing, if it exited non-zero.
adv_done() {
	[ "`cat "$TESTDIR/rc.hpn"`" -eq 0 ] || return 1
	check_has_not "$1" "$TESTDIR/err.hpn" 'failed\|Connection closed'
}

# adv_lossless NAME MODE: after adv_copy hpn, each file of the patched
# client's destination is as before, a whole source or named in an
# error line (sftp-adversary.py compare).
adv_lossless() {
	case $2 in
	*-ra)	return 0 ;;	# resuming trusts what is there, as stock does
	esac
	_k=lossless
	[ "`adv_dir $2`" = up ] && _k=losslessup
	cp "$TESTDIR/err.hpn" "$TESTDIR/named.hpn"
	# One file copied alone is named by the command that failed (as
	# the unpatched client, it leaves what it got of it).
	case $2 in
	*-one)	[ "`cat "$TESTDIR/rc.hpn"`" -eq 0 ] ||
		    echo "failed: src/f0" >>"$TESTDIR/named.hpn" ;;
	esac
	if _why=`/usr/bin/python3 "$ADV" compare $_k "$TESTDIR/dst.hpn" \
	    "$TESTDIR/dst.stock" "$TESTDIR/before" "$TESTDIR/src" \
	    "$TESTDIR/named.hpn"`; then
		pass "$1"
	else
		fail "$1" "$_why"
	fi
}

# adv_same NAME MODE SWITCHES: the patched and the unpatched client copy
# in MODE against the adversary with SWITCHES: the same exit status, the
# same messages, the same files (and, with -p, modes and times), where a
# file both name in an error may differ only by being as before or a
# start of its source; and the patched client lost nothing.
adv_same() {
	case $3 in
	*nosize*)
		# A server that cannot change a file's size: the unpatched
		# scp overwrites in place and cannot truncate, leaving mixed
		# files without a word; the patched one names them.  So only
		# what the patched client leaves is checked.
		adv_copy hpn "$2" "$3"
		adv_lossless "$1-lossless" "$2"
		return
		;;
	esac
	adv_copy stock "$2" "$3"
	adv_copy hpn "$2" "$3"
	_why=""
	_rh=`cat "$TESTDIR/rc.hpn"`
	_rs=`cat "$TESTDIR/rc.stock"`
	[ "$_rh" = "$_rs" ] || _why="exit status $_rh, stock's $_rs; "
	_k=same
	case $2 in *-rp) _k=samep ;; esac
	if ! _w=`/usr/bin/python3 "$ADV" compare $_k "$TESTDIR/dst.hpn" \
	    "$TESTDIR/dst.stock" "$TESTDIR/before" "$TESTDIR/src" \
	    "$TESTDIR/err.hpn"`; then
		_why="$_why$_w; "
	fi
	# The unpatched sftp names the status of the last reply after a
	# failed READ (often "End of file") where the patched one names the
	# failure.  A resumed download that fails warns that the server
	# reordered replies whenever a short reply came with several reads
	# in flight: the patched client has more in flight, so it warns more
	# often (the files are compared all the same).
	sed -e "s|dst\.stock|dst.hpn|g" \
	    -e 's|^\(read remote ".*" : \)End of file|\1Failure|' \
	    "$TESTDIR/err.stock" | client_messages |
	    grep -v 'Unable to resume download of .*: server reordered' \
	    >"$TESTDIR/msgs.stock"
	# The patched client also warns, where the adversary cannot hash
	# files, that each resumed file is unverified (patch 0010; checked
	# in t-resume.sh).
	client_messages <"$TESTDIR/err.hpn" |
	    grep -v 'Unable to resume download of .*: server reordered' |
	    grep -v ': resuming unverified, from its size: the server cannot' \
	    >"$TESTDIR/msgs.hpn"
	if ! cmp -s "$TESTDIR/msgs.stock" "$TESTDIR/msgs.hpn"; then
		_why="$_why`diff "$TESTDIR/msgs.stock" "$TESTDIR/msgs.hpn" |
		    grep '^[<>]' | head -n 2 | tr '\n' ' '`"
	fi
	if [ -z "$_why" ]; then
		pass "$1"
	else
		fail "$1" "$_why (HPN_ADVERSARY=$3)"
	fi
	adv_lossless "$1-lossless" "$2"
}
