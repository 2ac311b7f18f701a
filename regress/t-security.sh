#!/bin/sh
#
# t-security.sh: no build a user can install lacks a security fix that
# OpenSSH (or Debian, for the releases built on its source) published.
#
#   1. the tree under test carries every fix patches/security lists for
#      its release and base, or was built with --enable-unfixed-openssh
#      and records exactly what it lacks (make install then refuses);
#   2. build-aux/check-fixes.sh can fail: a tree stripped of a fix's
#      marker (Terrapin's strict KEX, regreSSHion's safe grace handler)
#      is reported, and a marker missing from a release that should
#      have it is a table error;
#   3. configure refuses an upstream base that lacks fixes, naming them
#      and the supported route; --enable-unfixed-openssh warns.
#   4. README.hpn's release table names each release's base as
#      patches/releases does.
#   5. make's gate covers every tree it builds (issue 46), seen with
#      make -n on stamp files in a scratch build directory, as the review
#      reproduced it: the stock twin of a Debian base passes fixes-gate.sh
#      as the patched tree does; a tree that records missing fixes
#      (.hpn-unfixed) is redone, so refused, once OPENSSH_UNFIXED is no
#      longer yes; make deb takes its own opt-in, DEB_UNFIXED=yes on
#      make's command line (not configure's flag, not the environment),
#      and redoes packages built so without it.  On a release whose base
#      lacks fixes (make check-releases), the stock twin records the same
#      ones, and a Debian base's changelog version ends in ~unfixed.

. "`dirname "$0"`/lib.sh"

CHECK="$HPN_TOP/build-aux/check-fixes.sh"

# refused NAME PATTERN COMMAND...: pass if COMMAND fails and says PATTERN.
refused() {
	_n="$1"
	_p="$2"
	shift 2
	if _out=`"$@" 2>&1`; then
		fail "$_n" "accepted: $*"
	elif printf '%s\n' "$_out" | grep -q -- "$_p"; then
		pass "$_n"
	else
		fail "$_n" "no '$_p' in: `printf '%s\n' "$_out" | tail -n 1`"
	fi
}
GATE="$HPN_TOP/build-aux/fixes-gate.sh"
BASE=`cat "$HPN_BUILD/.hpn-base" 2>/dev/null || echo upstream`

# 1. The tree under test.
[ -f "$HPN_BUILD/.hpn-patched" ] || die "no patched tree at $HPN_BUILD: run make first"
sh "$CHECK" "$HPN_OPENSSH" "$BASE" "$HPN_BUILD" >"$TESTDIR/fixes.out" 2>&1
rc=$?
if [ $rc -eq 2 ]; then
	fail tree-agrees-with-table "`tail -n 2 "$TESTDIR/fixes.out" | head -n 1`"
else
	pass tree-agrees-with-table
fi
sed -n 's/^missing //p' "$TESTDIR/fixes.out" >"$TESTDIR/missing"
if [ -f "$HPN_BUILD/.hpn-unfixed" ]; then
	# An override build (make check-releases): what it lacks is recorded,
	# and make install refuses it.
	cut -d: -f1 "$TESTDIR/missing" >"$TESTDIR/missing.ids"
	cut -d: -f1 "$HPN_BUILD/.hpn-unfixed" >"$TESTDIR/recorded.ids"
	check unfixed-recorded cmp "$TESTDIR/missing.ids" "$TESTDIR/recorded.ids"
	if sh "$GATE" --refuse-install "$HPN_BUILD" >"$TESTDIR/inst.out" 2>&1; then
		fail unfixed-install-refused "fixes-gate let it be installed"
	else
		check_has unfixed-install-refused "$TESTDIR/inst.out" \
		    'refusing to install'
	fi
else
	if [ $rc -eq 0 ]; then
		pass tree-carries-fixes
	else
		fail tree-carries-fixes "`head -n 1 "$TESTDIR/missing"`"
	fi
	check install-allowed sh "$GATE" --refuse-install "$HPN_BUILD"
fi
if [ "$BASE" != upstream ]; then
	# A Debian base: the series went on top of Debian's patches.
	check_has debian-base-changelog "$HPN_BUILD/debian/changelog" \
	    '^openssh (.*+hpn'
	# Built without fixes: its version says so, below any with them.
	if [ -f "$HPN_BUILD/.hpn-unfixed" ]; then
		check_has debian-base-unfixed-version \
		    "$HPN_BUILD/debian/changelog" '^openssh (.*+hpn[0-9]*~unfixed)'
	fi
fi
# The stock twin went through the same gate: the same record, or none.
if [ -f "$STOCK_BUILD/.hpn-unpacked" ]; then
	if [ -f "$HPN_BUILD/.hpn-unfixed" ]; then
		cut -d: -f1 "$STOCK_BUILD/.hpn-unfixed" 2>/dev/null \
		    >"$TESTDIR/stock.ids"
		check stock-unfixed-recorded cmp "$TESTDIR/missing.ids" \
		    "$TESTDIR/stock.ids"
	else
		check stock-carries-fixes test ! -f "$STOCK_BUILD/.hpn-unfixed"
	fi
fi

# 2. The check can fail: fake trees made from the tree under test.
fake="$TESTDIR/fake"
mkdir -p "$fake"
for f in `sed -e 's/^#.*//' "$HPN_TOP/patches/security" |
    awk -F' [|] ' 'NF == 6 { gsub(/ /, "", $4); if ($4 != "-") print $4 }' |
    sort -u` sshd.c sshd-session.c; do
	[ -f "$HPN_BUILD/$f" ] && cp "$HPN_BUILD/$f" "$fake/"
done
# The newest release carries every fix: all markers are in its tree.
if [ "$HPN_OPENSSH" = "`sed -n 's/^OPENSSH_DEFAULT_VERSION=//p' "$HPN_TOP/configure.ac"`" ]; then
	check fake-newest-complete sh "$CHECK" "$HPN_OPENSSH" upstream "$fake"
	# Without strict KEX: a table error for this release, a missing fix
	# for an older one.
	sed -i 's/kex-strict-s-v00@openssh.com/kex-strict-removed/g' "$fake/kex.c"
	sh "$CHECK" "$HPN_OPENSSH" upstream "$fake" >"$TESTDIR/f1.out" 2>&1
	if [ $? -eq 2 ]; then
		check_has fake-marker-gone-is-table-error "$TESTDIR/f1.out" \
		    'CVE-2023-48795 is in OpenSSH 9.6p1'
	else
		fail fake-marker-gone-is-table-error "exit status not 2"
	fi
	sh "$CHECK" 9.2p1 debian:bookworm "$fake" >"$TESTDIR/f2.out" 2>&1
	[ $? -eq 1 ] || fail fake-terrapin-missing "exit status not 1"
	check_has fake-terrapin-missing "$TESTDIR/f2.out" \
	    '^missing CVE-2023-48795: .*Terrapin'
	check_has fake-debian-carries-others "$TESTDIR/f2.out" \
	    '^carried CVE-2026-35414'
	# regreSSHion: a grace handler that calls sigdie(), whose logging
	# is live, then compiled out as Debian's backport does.
	cat >"$fake/sshd-session.c" <<'EOF'
static void
grace_alarm_handler(int sig)
{
	sigdie("Timeout before authentication for %s port %d",
	    ssh_remote_ipaddr(the_active_state), ssh_remote_port(the_active_state));
}
EOF
	cat >"$fake/log.c" <<'EOF'
void
sshsigdie(const char *file, const char *func, int line, int showfunc,
    LogLevel level, const char *suffix, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	sshlogv(file, func, line, showfunc, SYSLOG_LEVEL_FATAL,
	    suffix, fmt, args);
	va_end(args);
	_exit(1);
}
EOF
	sh "$CHECK" 9.2p1 debian:bookworm "$fake" >"$TESTDIR/f3.out" 2>&1
	check_has fake-regresshion-missing "$TESTDIR/f3.out" \
	    '^missing CVE-2024-6387'
	sed -i -e 's/^	va_list args;/#if 0\n&/' -e 's/^	va_end(args);/&\n#endif/' \
	    "$fake/log.c"
	sh "$CHECK" 9.2p1 debian:bookworm "$fake" >"$TESTDIR/f4.out" 2>&1
	check_has fake-regresshion-backport "$TESTDIR/f4.out" \
	    '^carried CVE-2024-6387'
	# A fix without a marker: Debian's changelog must name it.
	mkdir -p "$fake/debian"
	printf 'openssh (1:9.2p1-2+deb12u99) bookworm-security; urgency=high\n\n  * CVE-2026-60002: test.\n' \
	    >"$fake/debian/changelog"
	sh "$CHECK" 9.2p1 debian:bookworm "$fake" >"$TESTDIR/f5.out" 2>&1
	check_has fake-changelog-names-fix "$TESTDIR/f5.out" \
	    '^carried CVE-2026-60002 (debian/changelog)'
	check_has fake-changelog-not-others "$TESTDIR/f5.out" \
	    '^missing CVE-2026-60001'
	sh "$CHECK" 9.2p1 upstream "$fake" >"$TESTDIR/f6.out" 2>&1
	check_has fake-upstream-ignores-changelog "$TESTDIR/f6.out" \
	    '^missing CVE-2026-60002'
	# Our own entry (mkdeb.sh's, "+hpn") names the fixes a build lacks:
	# that is no fix.
	{
		printf 'openssh (1:9.2p1-2+deb12u99+hpn1~unfixed) UNRELEASED; urgency=medium\n\n'
		printf '  * UNFIXED: CVE-2026-60001 CVE-2026-59995\n\n'
		cat "$fake/debian/changelog"
	} >"$fake/debian/changelog.new"
	mv "$fake/debian/changelog.new" "$fake/debian/changelog"
	sh "$CHECK" 9.2p1 debian:bookworm "$fake" >"$TESTDIR/f7.out" 2>&1
	check_has fake-changelog-ours-ignored "$TESTDIR/f7.out" \
	    '^missing CVE-2026-60001'
	check_has fake-changelog-debian-still "$TESTDIR/f7.out" \
	    '^carried CVE-2026-60002 (debian/changelog)'
	# The gate: refuses, or records and warns with the override.
	sh "$GATE" 9.2p1 debian:bookworm no "$fake" >"$TESTDIR/g1.out" 2>&1 &&
	    fail gate-refuses "the gate passed a tree without Terrapin's fix" ||
	    check_has gate-refuses "$TESTDIR/g1.out" \
	    'security: build OpenSSH .* instead'
	check gate-refusal-leaves-no-record test ! -f "$fake/.hpn-unfixed"
	sh "$GATE" 9.2p1 debian:bookworm yes "$fake" >"$TESTDIR/g2.out" 2>&1
	check_has gate-override-warns "$TESTDIR/g2.out" \
	    'WARNING: .*for tests only, never install it'
	check_has gate-override-records "$fake/.hpn-unfixed" '^CVE-2023-48795'
else
	skip fake-trees "the fake trees are made from the newest release's tree"
fi
refused check-fixes-bad-base 'unknown base ubuntu:jammy' \
    sh "$CHECK" 9.2p1 ubuntu:jammy "$fake"

# 3. configure: an upstream base that lacks fixes is refused.
if [ -x "$HPN_TOP/configure" ]; then
	cfg="$TESTDIR/cfg"
	mkdir "$cfg"
	(cd "$cfg" && cp -p "$HPN_TOP/configure" "$HPN_TOP/Makefile.in" \
	    "$HPN_TOP/configure.ac" . && cp -pR "$HPN_TOP/patches" \
	    "$HPN_TOP/build-aux" .) || die "cannot copy configure"
	if (cd "$cfg" && ./configure --with-openssh-version=10.0p1 \
	    --with-openssh-base=upstream) >"$TESTDIR/c1.out" 2>&1; then
		fail configure-refuses-upstream-10.0p1 "configure accepted upstream 10.0p1"
	else
		check_has configure-refuses-upstream-10.0p1 "$TESTDIR/c1.out" \
		    'CVE-2026-60002'
		check_has configure-names-route "$TESTDIR/c1.out" \
		    'build OpenSSH 10.5p1 (the default)'
	fi
	if (cd "$cfg" && ./configure --with-openssh-version=9.2p1 \
	    --with-openssh-base=upstream) >"$TESTDIR/c2.out" 2>&1; then
		fail configure-refuses-upstream-9.2p1 "configure accepted it"
	else
		check_has configure-refuses-upstream-9.2p1 "$TESTDIR/c2.out" \
		    'CVE-2024-6387: sshd: regreSSHion'
		check_has configure-names-debian-route "$TESTDIR/c2.out" \
		    "build it on Debian's source"
	fi
	if (cd "$cfg" && ./configure --with-openssh-version=10.0p1 \
	    --with-openssh-base=upstream --enable-unfixed-openssh) >"$TESTDIR/c3.out" 2>&1; then
		check_has configure-override-warns "$TESTDIR/c3.out" \
		    'WARNING: --enable-unfixed-openssh'
		check_has configure-override-to-make "$cfg/Makefile" \
		    '^OPENSSH_UNFIXED=[ 	]*yes'
		check_has_not configure-override-not-to-openssh "$cfg/Makefile" \
		    "^OPENSSH_CONFIGURE_ARGS=.*unfixed"
	else
		fail configure-override-warns "`tail -n 1 "$TESTDIR/c3.out"`"
	fi
	if (cd "$cfg" && ./configure --with-openssh-version=9.2p1) \
	    >"$TESTDIR/c4.out" 2>&1; then
		check_has configure-9.2p1-debian-base "$cfg/Makefile" \
		    '^OPENSSH_BASE=[ 	]*debian:bookworm'
	else
		fail configure-9.2p1-debian-base "`tail -n 1 "$TESTDIR/c4.out"`"
	fi
	refused configure-bad-base 'takes upstream or debian, not "gentoo"' \
	    sh -c "cd '$cfg' && ./configure --with-openssh-base=gentoo"
	refused configure-no-debian-base 'Debian maintains no OpenSSH 10.5p1' \
	    sh -c "cd '$cfg' && ./configure --with-openssh-base=debian"
	refused configure-unfixed-no-value 'takes no value' \
	    sh -c "cd '$cfg' && ./configure --enable-unfixed-openssh=maybe"
else
	skip configure "no generated configure in $HPN_TOP"
fi

# 5. make's gate, with make -n in a scratch build directory: the copy of
# configure above, configured for a Debian base and for upstream 10.0p1 with the
# override, and this checkout's files.  mk OUT ARG...: make -n ARG... with
# that Makefile from the top directory into $TESTDIR/OUT.
mk() {
	_o="$TESTDIR/$1"
	shift
	make -n -C "$HPN_TOP" -f "$cfg/Makefile" BUILD="$gb" "$@" \
	    >"$_o" 2>&1
}
# stamps TREE RELEASE BASE STAMP: the stamps a built tree leaves (STAMP:
# .hpn-patched or .hpn-unpacked), newer than everything it depends on.
stamps() {
	mkdir -p "$gb/$1"
	echo "$2" >"$gb/$1/.hpn-$4"
	echo "$3" >"$gb/$1/.hpn-base"
	touch "$gb/$1/.hpn-configured"
}
if [ -x "$HPN_TOP/configure" ] && command -v make >/dev/null; then
	gb="$TESTDIR/gate-build"
	rm -rf "$gb"
	mkdir -p "$gb/debian-10.0p1"
	touch "$gb/openssh-10.0p1.tar.gz"
	touch "$gb/debian-10.0p1/.hpn-fetched"
	if (cd "$cfg" && ./configure --with-openssh-version=10.0p1) \
	    >"$TESTDIR/c5.out" 2>&1; then
		# The stock twin of a Debian base: through the gate, without
		# the override.
		mk g1.out "$gb/stock/.hpn-unpacked"
		check_has gate-stock-debian "$TESTDIR/g1.out" \
		    "fixes-gate.sh 10.0p1 debian:trixie no $gb/stock.tmp"
		mk g1b.out "$gb/stock/.hpn-unpacked" OPENSSH_BASE=upstream
		check_has gate-stock-upstream "$TESTDIR/g1b.out" \
		    "fixes-gate.sh 10.0p1 upstream no $gb/stock.tmp"
		# Trees recorded as unfixed: redone (the gate then refuses
		# them) unless the override is still on.
		for t in hpn stock; do
			case $t in
			hpn)	st=patched ;;
			stock)	st=unpacked ;;
			esac
			rm -rf "$gb/$t"
			stamps $t 10.0p1 debian:trixie $st
			touch "$gb/$t/.hpn-unfixed"
			mk g2.out "$gb/$t/.hpn-$st"
			check_has gate-$t-unfixed-redone "$TESTDIR/g2.out" \
			    "rm -rf $gb/$t $gb/$t.tmp"
			mk g3.out "$gb/$t/.hpn-$st" OPENSSH_UNFIXED=yes
			check_has_not gate-$t-unfixed-override-kept \
			    "$TESTDIR/g3.out" "rm -rf $gb/$t"
			rm -f "$gb/$t/.hpn-unfixed"
			mk g4.out "$gb/$t/.hpn-$st"
			check_has_not gate-$t-fixed-kept "$TESTDIR/g4.out" \
			    "rm -rf $gb/$t"
		done
	else
		fail gate-stock-debian "`tail -n 1 "$TESTDIR/c5.out"`"
	fi
	if (cd "$cfg" && ./configure --with-openssh-version=10.0p1 \
	    --with-openssh-base=upstream --enable-unfixed-openssh) >"$TESTDIR/c6.out" 2>&1; then
		# make deb: configure's override does not count, nor does
		# the environment; DEB_UNFIXED=yes on make's command line does.
		mk d1.out deb DEB_DIR="$gb/deb"
		check_has deb-ignores-configure-override "$TESTDIR/d1.out" \
		    'DEBIAN=trixie OPENSSH_UNFIXED=no'
		DEB_UNFIXED=yes mk d2.out deb DEB_DIR="$gb/deb"
		check_has deb-ignores-environment "$TESTDIR/d2.out" \
		    'OPENSSH_UNFIXED=no'
		mk d3.out deb DEB_DIR="$gb/deb" DEB_UNFIXED=yes
		check_has deb-command-line-opt-in "$TESTDIR/d3.out" \
		    'OPENSSH_UNFIXED=yes'
		if mk d4.out deb DEB_DIR="$gb/deb" DEB_UNFIXED=maybe; then
			fail deb-opt-in-bad-value "make accepted DEB_UNFIXED=maybe"
		else
			check_has deb-opt-in-bad-value "$TESTDIR/d4.out" \
			    'DEB_UNFIXED is yes or no, not "maybe"'
		fi
		# Packages built with the opt-in are redone without it.
		mkdir -p "$gb/deb"
		echo 10.0p1-7+hpn1~unfixed >"$gb/deb/version"
		touch "$gb/deb/unfixed"
		mk d5.out deb DEB_DIR="$gb/deb"
		check_has deb-unfixed-redone "$TESTDIR/d5.out" 'mkdeb.sh'
		mk d6.out deb DEB_DIR="$gb/deb" DEB_UNFIXED=yes
		check_has_not deb-unfixed-opt-in-kept "$TESTDIR/d6.out" \
		    'mkdeb.sh'
	else
		fail deb-ignores-configure-override "`tail -n 1 "$TESTDIR/c6.out"`"
	fi
else
	skip make-gate "no generated configure in $HPN_TOP"
fi

# 4. README.hpn's release table agrees with patches/releases.
sed -e 's/#.*//' "$HPN_TOP/patches/releases" | awk 'NF { print $1, $4 }' |
while read -r rel base; do
	case "$base" in
	upstream)	want="upstream" ;;
	debian:*)	want="Debian `echo "$base" | sed 's/^debian://'`" ;;
	esac
	if grep -q "^| $rel .*| $want" "$HPN_TOP/README.hpn"; then
		pass "readme-base-$rel"
	else
		fail "readme-base-$rel" "README.hpn's release table does not give $rel the base '$want'"
	fi
done
exit 0
