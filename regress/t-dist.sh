#!/bin/sh
#
# t-dist.sh: the patch set as users take it (make dist).  Every a la
# carte patch applies alone to pristine OpenSSH (the release under test)
# with plain "patch -p1" and no fuzz, creates its new files, and the
# result builds and has the feature; every subset applies in series
# order; the kitchen sink makes exactly the tree we build and test; the
# tarball and the checksums are complete and correct.  A patch whose
# header says "Needs: OTHER.patch" (0010 on 0007) is taken "alone" on
# top of OTHER, and subsets that have it without OTHER are skipped.

. "`dirname "$0"`/lib.sh"

TARBALL="${HPN_TARBALL:-$HPN_TOP/build/openssh-$HPN_OPENSSH.tar.gz}"
VERSION="${HPN_VERSION:-hpn1}"
DIST="$TESTDIR/dist"
SERIES=`sed -e 's/#.*//' "$HPN_PATCHDIR/series"`

[ -f "$TARBALL" ] || die "no OpenSSH tarball at $TARBALL: run make first"

# pristine DIR: a fresh, unpatched OpenSSH in DIR.
pristine() {
	rm -rf "$1"
	mkdir -p "$1"
	tar -xzf "$TARBALL" -C "$1" --strip-components=1 ||
	    die "cannot unpack $TARBALL"
}

# needs PATCH: the a la carte patches PATCH needs under it (its header's
# Needs: line), in $DIST.
needs() {
	sed '/^---$/q' "$DIST/$1" | sed -n 's/^Needs: //p' | tr ',' ' '
}

# 1. make dist's script writes everything.
if sh "$HPN_TOP/build-aux/mkdist.sh" "$TARBALL" "$HPN_TOP" "$DIST" \
    "$VERSION" "$HPN_OPENSSH" >"$TESTDIR/mkdist.out" 2>&1; then
	pass mkdist
else
	fail mkdist "`tail -n 3 "$TESTDIR/mkdist.out"`"
	exit 0
fi
KS="$DIST/openssh-$HPN_OPENSSH-$VERSION-kitchen-sink.patch"
TGZ="$DIST/hpn-patches-$VERSION.tar.gz"
missing=
for f in $SERIES series BASE "`basename "$KS"`" "`basename "$TGZ"`" SHA256SUMS; do
	[ -s "$DIST/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then
	pass dist-files
else
	fail dist-files "missing or empty in dist/:$missing"
fi
if [ "`cat "$DIST/series"`" = "`printf '%s\n' $SERIES`" ]; then
	pass dist-series
else
	fail dist-series "dist/series differs from patches/$HPN_OPENSSH/series"
fi

# BASE names the base and, where upstream's release lacks published
# security fixes (patches/security), every one of them.
check_has dist-base-named "$DIST/BASE" "^Base: upstream OpenSSH portable $HPN_OPENSSH "
lacking=`sh "$HPN_TOP/build-aux/check-fixes.sh" "$HPN_OPENSSH" upstream |
    sed -n 's/^missing \([^:]*\):.*/\1/p'`
if [ -z "$lacking" ]; then
	check_has dist-base-security "$DIST/BASE" '^Security: it carries every'
else
	bad=
	for id in $lacking; do
		grep -q "^  $id: " "$DIST/BASE" || bad="$bad $id"
	done
	if [ -z "$bad" ] && grep -q 'LACKS these published' "$DIST/BASE"; then
		pass dist-base-security
	else
		fail dist-base-security "BASE does not name:$bad"
	fi
fi

# 2. Checksums, and the tarball holds the patch set and its own sums.
check dist-sha256sums sh -c "cd '$DIST' && sha256sum --strict -c SHA256SUMS"
mkdir "$TESTDIR/tgz"
if tar -xzf "$TGZ" -C "$TESTDIR/tgz" &&
    (cd "$TESTDIR/tgz/hpn-patches-$VERSION" &&
    sha256sum --strict -c SHA256SUMS >/dev/null); then
	bad=
	for f in $SERIES series BASE "`basename "$KS"`"; do
		cmp -s "$DIST/$f" "$TESTDIR/tgz/hpn-patches-$VERSION/$f" ||
		    bad="$bad $f"
	done
	for f in README.hpn LICENSE `cd "$HPN_TOP" && ls docs/*.md`; do
		cmp -s "$HPN_TOP/$f" "$TESTDIR/tgz/hpn-patches-$VERSION/$f" ||
		    bad="$bad $f"
	done
	if [ -z "$bad" ]; then
		pass dist-tarball
	else
		fail dist-tarball "the tarball's copy differs or lacks:$bad"
	fi
else
	fail dist-tarball "the tarball does not unpack to hpn-patches-$VERSION/ with valid sums"
fi

# 3. DEP-3 headers.
for p in $SERIES "`basename "$KS"`"; do
	hdr=`sed '/^---$/q' "$DIST/$p"`
	lack=
	for field in Description: Author: Forwarded: Last-Update:; do
		printf "%s\n" "$hdr" | grep -q "^$field " || lack="$lack $field"
	done
	if [ -z "$lack" ]; then
		pass "dep3-$p"
	else
		fail "dep3-$p" "header lacks$lack"
	fi
done

# 4. Each a la carte patch alone: plain "patch -p1" (fuzz allowed by
# default, yet none used), with its new files.
pristine "$TESTDIR/pristine"
for p in $SERIES; do
	rm -rf "$TESTDIR/one"
	cp -a "$TESTDIR/pristine" "$TESTDIR/one"
	for n in `needs $p`; do
		patch -d "$TESTDIR/one" -p1 -s <"$DIST/$n" ||
		    fail "alone-applies-$p" "$n, which it needs, does not apply"
	done
	if out=`patch -d "$TESTDIR/one" -p1 <"$DIST/$p" 2>&1` &&
	    ! printf "%s\n" "$out" | grep -qE 'fuzz|FAILED|Reversed'; then
		pass "alone-applies-$p"
	else
		fail "alone-applies-$p" "`printf "%s\n" "$out" | grep -E 'fuzz|FAILED|Reversed|rror' | head -n 2`"
		continue
	fi
	new=`sed -n 's|^+++ b/\([^ 	]*\).*|\1|p' "$DIST/$p" | while read -r f; do
		[ -f "$TESTDIR/pristine/$f" ] || echo "$f"; done`
	bad=
	for f in $new; do
		cmp -s "$HPN_TOP/$f" "$TESTDIR/one/$f" || bad="$bad $f"
	done
	if [ -z "$bad" ]; then
		pass "alone-new-files-$p"
	else
		fail "alone-new-files-$p" "differ from ours:$bad"
	fi
done

# 5. Every subset, in series order; and the checker itself catches a
# conflict (the same patch twice).
(cd "$DIST" && sh "$HPN_TOP/build-aux/check-subsets.sh" \
    "$TESTDIR/pristine" $SERIES) >"$TESTDIR/subsets.out" 2>&1
n=`grep -c '^ok ' "$TESTDIR/subsets.out"`
sk=`grep -c '^skip ' "$TESTDIR/subsets.out"`
want=$(( (1 << `echo $SERIES | wc -w`) - 1 ))
# Skipped: the subsets with a patch that needs another but not that one.
want_sk=0
i=0
for p in $SERIES; do
	if [ -n "`needs $p`" ]; then
		# Half of the subsets with p lack the one patch it needs.
		want_sk=$(( want_sk + (1 << (`echo $SERIES | wc -w` - 2)) ))
	fi
done
if [ "$n" -eq $((want - want_sk)) ] && [ "$sk" -eq "$want_sk" ] &&
    ! grep -q '^FAIL' "$TESTDIR/subsets.out"; then
	pass "subsets-apply-$n"
	echo "# subsets-apply: $n apply, $sk skipped (a patch without what it needs)"
else
	fail subsets-apply "$n of $((want - want_sk)), $sk skipped of $want_sk: `grep '^FAIL' "$TESTDIR/subsets.out" | head -n 2`"
fi
first=`echo $SERIES | cut -d' ' -f1`
if (cd "$DIST" && sh "$HPN_TOP/build-aux/check-subsets.sh" \
    "$TESTDIR/pristine" $first $first) >"$TESTDIR/conflict.out" 2>&1; then
	fail subsets-conflict-caught "check-subsets accepted $first twice"
elif grep -q "^FAIL .*$first" "$TESTDIR/conflict.out"; then
	pass subsets-conflict-caught
else
	fail subsets-conflict-caught "no FAIL line: `tail -n 1 "$TESTDIR/conflict.out"`"
fi

# 6. The kitchen sink makes the very tree we build and test: every file
# it touches equals build/hpn's (whose configure was then regenerated).
rm -rf "$TESTDIR/all"
cp -a "$TESTDIR/pristine" "$TESTDIR/all"
if out=`patch -d "$TESTDIR/all" -p1 -F0 <"$KS" 2>&1`; then
	bad=
	for f in `sed -n 's|^+++ b/\([^ 	]*\).*|\1|p' "$KS"`; do
		cmp -s "$TESTDIR/all/$f" "$HPN_BUILD/$f" || bad="$bad $f"
	done
	if [ -z "$bad" ]; then
		pass kitchen-sink-is-our-build
	else
		fail kitchen-sink-is-our-build "differs from $HPN_BUILD:$bad"
	fi
else
	fail kitchen-sink-is-our-build "does not apply: `printf "%s\n" "$out" | tail -n 1`"
fi

# 7. Each a la carte patch alone builds, with the configure arguments of
# our build, and has its feature (and no other's).  Each is built
# incrementally in a copy of the configured stock twin (same flags; make
# rebuilds what the patch changes and relinks every program); one that
# touches configure.ac gets autoreconf and a fresh configure there first,
# which leaves config.h and its time alone where its content is the same
# (0001's check for pthread.h defines nothing).
# OpenSSH's Makefile rebuilds every object when Makefile.in is newer; a
# patch whose Makefile.in lines differ only in object names (and in
# $(CHANNELLIBS) on link lines: 0010's libcrypto) changes no object's
# flags, so Makefile.in keeps the stock time and only what the patch
# changes (sources and, through .depend, their headers) compiles.
ARGS=`cd "$STOCK_BUILD" && ./config.status --config`
NPROC=`nproc 2>/dev/null || echo 2`
makefile_objs_only() {
	awk '/^diff |^--- /{f=0} /^\+\+\+ /{f=($2=="b/Makefile.in")}
	    f && /^[-+]/ && !/^\+\+\+ / {
		s=substr($0, 2); gsub(/[^ \t]+\.o/, "", s)
		gsub(/\$\(CHANNELLIBS\)/, "", s)
		gsub(/[ \t\\]/, "", s)
		if (substr($0, 1, 1) == "-") m = m s; else p = p s
	    } END { exit m != p }' "$1"
}
for p in $SERIES; do
	t="$TESTDIR/build-$p"
	how="incremental, in a copy of the stock build"
	cp -a "$STOCK_BUILD" "$t"
	for n in `needs $p`; do
		patch -d "$t" -p1 -s -F0 <"$DIST/$n"
	done
	patch -d "$t" -p1 -s -F0 <"$DIST/$p" &&
	    if makefile_objs_only "$DIST/$p"; then
		touch -r "$STOCK_BUILD/Makefile.in" "$t/Makefile.in"
	    fi &&
	    if grep -q '^+++ b/configure.ac' "$DIST/$p"; then
		how="autoreconf + configure, in a copy of the stock build"
		(cd "$t" && autoreconf >build.log 2>&1 &&
		    eval ./configure $ARGS >>build.log 2>&1)
	    else
		(cd "$t" && ./config.status >build.log 2>&1)
	    fi
	if [ $? -eq 0 ] && (cd "$t" && make -j"$NPROC" >>build.log 2>&1); then
		pass "alone-builds-$p"
	else
		fail "alone-builds-$p" "($how) `tail -n 3 "$t/build.log" | tr '\n' ' '`"
		rm -rf "$t"
		continue
	fi
	G=`"$t/ssh" -G -F /dev/null host.example 2>&1`
	V=`"$t/ssh" -V 2>&1`
	has=
	printf "%s\n" "$G" | grep -q '^aesctrthreads ' && has="$has mt"
	printf "%s\n" "$G" | grep -q '^noneenabled ' && has="$has none"
	printf "%s\n" "$G" | grep -q '^hpndisabled ' && has="$has window"
	printf "%s\n" "$G" | grep -q '^usemptcp ' && has="$has mptcp"
	printf "%s\n" "$G" | grep -q '^metrics ' && has="$has verdict"
	case "$V" in *-hpn1,*) has="$has tag" ;; esac
	case "$p" in
	*mt-aes-ctr*)		want=" mt" ;;
	*none-switch*)		want=" none" ;;
	*dynamic-window*)	want=" window tag" ;;
	*mptcp*)		want=" mptcp" ;;
	*transfer-verdict*)	want=" verdict" ;;
	*)			want= ;;
	esac
	if [ "$has" = "$want" ]; then
		pass "alone-has-feature-$p"
	else
		fail "alone-has-feature-$p" "options/tag present:${has:- none}, expected:${want:- none}"
	fi
	# The program that carries a connection after authentication:
	# sshd-session, or sshd itself before 9.8p1.
	session=sshd-session
	[ -x "$t/sshd-session" ] || session=sshd
	case "$p" in
	*progress-peak*)
		# The meter's "now"/"peak" rate label lives in scp.
		if strings "$t/scp" | grep -qx peak; then
			pass "alone-has-feature-$p-meter"
		else
			fail "alone-has-feature-$p-meter" "scp has no peak rate"
		fi ;;
	*transfer-log*)
		if strings "$t/$session" | grep -q 'Transfer stats'; then
			pass "alone-has-feature-$p-log"
		else
			fail "alone-has-feature-$p-log" "$session has no 'Transfer stats' line"
		fi ;;
	*sftp-pipeline*)
		# The growing request pipeline and many files at once, in
		# both SFTP clients.
		bad=
		for prog in sftp scp; do
			strings "$t/$prog" >"$t/strings"
			grep -q 'requests of %zu bytes in flight' \
			    "$t/strings" &&
			    grep -q 'up to %u files at once' "$t/strings" ||
			    bad="$bad $prog"
		done
		if [ -z "$bad" ]; then
			pass "alone-has-feature-$p-pipeline"
		else
			fail "alone-has-feature-$p-pipeline" "no pipeline in:$bad"
		fi ;;
	*dynamic-window*|*kex-guess*)
		# The guessed key exchange is its own patch: the windows
		# come without it.
		if strings "$t/ssh" |
		    grep -q 'SSH2_MSG_KEXINIT guesses the key exchange'; then
			got=yes
		else
			got=no
		fi
		case "$p:$got" in
		*kex-guess*:yes|*dynamic-window*:no)
			pass "alone-has-feature-$p-guess-$got" ;;
		*)	fail "alone-has-feature-$p-guess-$got" \
			    "ssh's guessed key exchange: $got" ;;
		esac ;;
	*verified-resume*)
		# On 0007: sftp-server answers check-file, sftp and scp ask.
		bad=
		strings "$t/sftp-server" | grep -qx check-file-name ||
		    bad="$bad sftp-server"
		for prog in sftp scp; do
			strings "$t/$prog" | grep -qx check-file-handle ||
			    bad="$bad $prog"
		done
		if [ -z "$bad" ]; then
			pass "alone-has-feature-$p-check-file"
		else
			fail "alone-has-feature-$p-check-file" "no check-file in:$bad"
		fi ;;
	*transfer-verdict*)
		# ssh and sshd say what limited the transfer.
		bad=
		for prog in ssh $session; do
			strings "$t/$prog" | grep -q '^Transfer verdict: %s: ' ||
			    bad="$bad $prog"
		done
		if [ -z "$bad" ]; then
			pass "alone-has-feature-$p-verdict"
		else
			fail "alone-has-feature-$p-verdict" "no verdict in:$bad"
		fi ;;
	*packet-path*)
		# libcrypto's Poly1305 in the packet path of ssh and sshd.
		bad=
		for prog in ssh $session; do
			strings "$t/$prog" >"$t/strings"
			grep -qx EVP_MAC_init "$t/strings" &&
			    grep -q 'Poly1305 from %s' "$t/strings" ||
			    bad="$bad $prog"
		done
		if [ -z "$bad" ]; then
			pass "alone-has-feature-$p-evp"
		else
			fail "alone-has-feature-$p-evp" "no libcrypto Poly1305 in:$bad"
		fi ;;
	esac
	rm -rf "$t"
done

exit 0
