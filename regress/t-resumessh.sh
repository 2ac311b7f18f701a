#!/bin/sh
#
# t-resumessh.sh: verified resume (patch 0010) over ssh.  To our sshd
# (sftp-server and internal-sftp), a 64 MiB file: reget and reput of a
# true 48 MiB start move about 16 MiB (ssh -v's byte count), of a start
# bad in its second range about 32 MiB; scp -Z both ways the same; an
# scp download killed in mid-copy (SIGKILL: its file may have holes) and
# resumed with -Z ends exact.  Against Debian's sshd (its sftp-server
# cannot hash): the warning, and stock's result.  scp -Z with -O, or
# between two local files: an error.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-sftp.sh"
. "$HPN_TOP/regress/lib-resume.sh"

# --- Over ssh.
if default_release_only "resume over ssh"; then
	:
else
	DATA=`make_data 67108864`
	# received LOG / sent LOG: ssh -v's byte counts.
	received() {
		sed -n 's/.*Transferred: sent [0-9]*, received \([0-9]*\) bytes.*/\1/p' \
		    "$1" | tail -n 1
	}
	sent() {
		sed -n 's/.*Transferred: sent \([0-9]*\), received.*/\1/p' \
		    "$1" | tail -n 1
	}
	# check_bytes NAME COUNT LOW HIGH
	check_bytes() {
		if [ -n "$2" ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
			pass "$1"
			echo "# $1: $2 bytes"
		else
			fail "$1" "${2:-no} bytes on the wire, want $3 to $4"
		fi
	}
	M=1048576
	T="$TESTDIR/t"
	for sub in sftp-server internal-sftp; do
		case $sub in
		sftp-server)	start_sshd lo hpn ;;
		*)		start_sshd lo hpn "Subsystem sftp internal-sftp" ;;
		esac
		# sftp reget and reput: a true 48 MiB start, then one bad in
		# its second range.
		for how in good bad; do
			head -c $(( 48 * M )) "$DATA" >"$T.down"
			head -c $(( 48 * M )) "$DATA" >"$T.up"
			if [ $how = bad ]; then
				flip "$T.down" $(( 40 * M ))
				flip "$T.up" $(( 40 * M ))
				lo=$(( 32 * M )); hi=$(( 34 * M ))
			else
				lo=$(( 16 * M )); hi=$(( 18 * M ))
			fi
			n="ssh-$sub-$how"
			for c in "reget down received" "reput up sent"; do
				set -- $c
				echo "$1 $DATA $T.$2" >"$TESTDIR/batch"
				"$SFTP" -v -S "$SSH" -F "$SSH_CONFIG" -b \
				    "$TESTDIR/batch" hpntest >/dev/null \
				    2>"$TESTDIR/e"
				check_copy "$n-$1" sftp $? "$TESTDIR/e" \
				    "$DATA" "$T.$2"
				check_bytes "$n-$1-bytes" \
				    "`$3 "$TESTDIR/e"`" $lo $hi
			done
			[ $how = good ] || check_has "$n-named" "$TESTDIR/e" \
			    "t.up\": differs from the source after $(( 32 * M ))"
		done
		stop_sshd
	done

	# scp -Z both ways, then an scp download killed in mid-copy.
	start_sshd lo hpn
	head -c $(( 48 * M )) "$DATA" >"$T.down"
	head -c $(( 48 * M )) "$DATA" >"$T.up"
	"$SCP" -v -Z -S "$SSH" -F "$SSH_CONFIG" "hpntest:$DATA" "$T.down" \
	    2>"$TESTDIR/e"
	check_copy scp-Z-down scp $? "$TESTDIR/e" "$DATA" "$T.down"
	check_bytes scp-Z-down-bytes "`received "$TESTDIR/e"`" \
	    $(( 16 * M )) $(( 18 * M ))
	"$SCP" -v -Z -S "$SSH" -F "$SSH_CONFIG" "$DATA" "hpntest:$T.up" \
	    2>"$TESTDIR/e"
	check_copy scp-Z-up scp $? "$TESTDIR/e" "$DATA" "$T.up"
	check_bytes scp-Z-up-bytes "`sent "$TESTDIR/e"`" \
	    $(( 16 * M )) $(( 18 * M ))

	# size_at_least FILE N: FILE has N bytes or more.
	size_at_least() {
		[ "`stat -c %s "$1" 2>/dev/null || echo 0`" -ge "$2" ]
	}
	rm -f "$T.killed"
	# (Its control socket's directory, which SIGKILL leaves, in TESTDIR.)
	TMPDIR="$TESTDIR" "$SCP" -q -l 80000 -S "$SSH" -F "$SSH_CONFIG" \
	    "hpntest:$DATA" "$T.killed" 2>/dev/null &
	kpid=$!
	hpn_track_pid $kpid
	wait_until 30 size_at_least "$T.killed" $(( 8 * M ))
	for p in `descendants $kpid` $kpid; do
		kill -KILL $p 2>/dev/null
	done
	wait $kpid 2>/dev/null
	hpn_untrack_pid $kpid
	got=`stat -c %s "$T.killed" 2>/dev/null || echo 0`
	if [ "$got" -ge $(( 8 * M )) ] && [ "$got" -lt $(( 64 * M )) ]; then
		pass scp-killed-partial
		echo "# scp-killed-partial: $got bytes left"
	else
		fail scp-killed-partial "$got bytes left by the killed scp"
	fi
	"$SCP" -v -Z -S "$SSH" -F "$SSH_CONFIG" "hpntest:$DATA" "$T.killed" \
	    2>"$TESTDIR/e"
	check_copy scp-killed-resumed scp $? "$TESTDIR/e" "$DATA" "$T.killed"
	check_bytes scp-killed-resumed-bytes "`received "$TESTDIR/e"`" \
	    $(( 64 * M - got )) $(( 64 * M - got + 34 * M ))
	stop_sshd

	# Debian's sshd: its sftp-server cannot hash.
	if [ -x "${SYS_SSHD:-/nonexistent}" ]; then
		start_sshd sys system
		head -c $(( 48 * M )) "$DATA" >"$T.down"
		echo "reget $DATA $T.down" >"$TESTDIR/batch"
		"$SFTP" -S "$SSH" -F "$SSH_CONFIG" -b "$TESTDIR/batch" \
		    hpntest >/dev/null 2>"$TESTDIR/e"
		check_copy system-reget sftp $? "$TESTDIR/e" "$DATA" "$T.down"
		check_has system-reget-warns "$TESTDIR/e" "$UNVERIFIED"
		stop_sshd
	else
		skip system-reget "no Debian sshd"
	fi
fi

# --- scp -Z where it cannot resume.
head -c 1000000 /dev/urandom >"$TESTDIR/zsrc"
"$SCP" -O -Z "$TESTDIR/zsrc" "$TESTDIR/zz" 2>"$TESTDIR/e"
check scp-Z-O-status test $? -eq 255
check_has scp-Z-O-says "$TESTDIR/e" '\-Z needs the SFTP protocol'
"$SCP" -Z "$TESTDIR/zsrc" "$TESTDIR/zz" 2>"$TESTDIR/e"
check scp-Z-local-status test $? -eq 1
check_has scp-Z-local-says "$TESTDIR/e" '\-Z cannot resume a local copy'
check scp-Z-local-nothing test ! -e "$TESTDIR/zz"
exit 0
