#!/bin/sh
#
# t-build.sh: our build's guards and promises.  A corrupt tarball stops
# the build before unpacking and names both SHA-256s; a repacked tarball
# of the release (other bytes, same files) passes on its content pin, a
# changed file fails it; an unsupported release is refused by configure;
# an unreachable tarball lists what was tried; a patch needing fuzz or an offset stops
# naming the patch and the file; configure passes OpenSSH's options
# through; "make install DESTDIR=" installs what OpenSSH's own does.

. "`dirname "$0"`/lib.sh"

REL="$HPN_OPENSSH"
# The release's pins: content, and upstream's tarball (or -).
CONTENT=`sed -e 's/#.*//' "$HPN_TOP/patches/releases" |
    awk -v v="$REL" '$1 == v { print $2 }'`
PINNED=`sed -e 's/#.*//' "$HPN_TOP/patches/releases" |
    awk -v v="$REL" '$1 == v { print $3 }'`
[ -n "$CONTENT" ] || die "no pins for OpenSSH '$REL' in patches/releases"
GET="$HPN_TOP/build-aux/get-openssh.sh"
APPLY="$HPN_TOP/build-aux/apply-series.sh"
TARBALL="${HPN_TARBALL:-$HPN_TOP/build/openssh-$REL.tar.gz}"

# contains NAME FILE STRING...: pass if FILE has every STRING.
contains() {
	_n="$1"
	_f="$2"
	shift 2
	for _s in "$@"; do
		if ! grep -qF -- "$_s" "$_f"; then
			fail "$_n" "output lacks '$_s': `head -c 300 "$_f"`"
			return 1
		fi
	done
	pass "$_n"
}

# 1. A corrupt tarball, given with --with-openssh-tarball.
head -c 4096 /dev/urandom >"$TESTDIR/bad.tar.gz"
badsum=`sha256 "$TESTDIR/bad.tar.gz"`
if sh "$GET" $REL $CONTENT $PINNED "$TESTDIR/dest.tar.gz" \
    "$TESTDIR/bad.tar.gz" >"$TESTDIR/get.out" 2>&1; then
	fail corrupt-tarball-refused "get-openssh.sh accepted a corrupt file"
else
	contains corrupt-tarball-refused "$TESTDIR/get.out" "SHA-256" \
	    "$CONTENT" "$badsum" "$TESTDIR/bad.tar.gz" "refusing"
fi
check corrupt-tarball-not-kept test ! -f "$TESTDIR/dest.tar.gz"

# 2. A corrupt cached copy is not used either.
cp "$TESTDIR/bad.tar.gz" "$TESTDIR/cache.tar.gz"
if sh "$GET" $REL $CONTENT $PINNED "$TESTDIR/cache.tar.gz" \
    >"$TESTDIR/get.out" 2>&1; then
	fail corrupt-cache-refused "a corrupt cached copy was accepted"
else
	contains corrupt-cache-refused "$TESTDIR/get.out" "$CONTENT" "$badsum"
fi

# 3. Nothing reachable: no file, no cache, a mirror that refuses, an
# apt-get that has no deb-src.  The message lists every source tried.
mkdir "$TESTDIR/bin"
for p in sh sha256sum awk mktemp cp mv dirname basename grep head cat rm \
    ls mkdir sed tar gzip find sort cut tr readlink; do
	_path=`command -v $p` && ln -s "$_path" "$TESTDIR/bin/$p"
done
cat >"$TESTDIR/bin/apt-get" <<'EOF'
#!/bin/sh
echo "E: You must put some 'deb-src' URIs in your sources.list" >&2
exit 100
EOF
cat >"$TESTDIR/bin/curl" <<'EOF'
#!/bin/sh
echo "curl: (7) Failed to connect" >&2
exit 7
EOF
chmod +x "$TESTDIR/bin/apt-get" "$TESTDIR/bin/curl"
if PATH="$TESTDIR/bin" OPENSSH_URL=http://127.0.0.1:1/openssh.tar.gz \
    sh "$GET" $REL $CONTENT $PINNED "$TESTDIR/none.tar.gz" \
    >"$TESTDIR/get.out" 2>&1
then
	fail unreachable-explained "succeeded with no source reachable"
else
	contains unreachable-explained "$TESTDIR/get.out" "cached copy" \
	    "http://127.0.0.1:1/openssh.tar.gz" "apt-get source" "deb-src" \
	    "--with-openssh-tarball"
fi

# 4. The pinned tarball itself passes (it is what make used).  So does
# the same release repacked as "git archive" makes it (other owner, group
# bits, times and bytes), on its content pin; one changed byte in one
# file, or a file too many, fails that pin, and the message names both.
if [ -f "$TARBALL" ]; then
	check pinned-tarball-accepted sh "$GET" $REL $CONTENT $PINNED \
	    "$TESTDIR/ok.tar.gz" "$TARBALL"
	# Given the same file again, the cached copy is left alone (a new
	# mtime would make make redo build/hpn and build/stock).
	touch -d @1000000000 "$TESTDIR/ok.tar.gz"
	sh "$GET" $REL $CONTENT $PINNED "$TESTDIR/ok.tar.gz" "$TARBALL" \
	    >/dev/null 2>&1
	check same-tarball-cache-untouched test \
	    "`stat -c %Y "$TESTDIR/ok.tar.gz"`" = 1000000000
	mkdir "$TESTDIR/re"
	tar -xzf "$TARBALL" -C "$TESTDIR/re"
	chmod -R g+w "$TESTDIR/re"
	repack() {
		(cd "$TESTDIR/re" && tar --owner=0 --group=0 --numeric-owner \
		    --mtime=@1000000000 -cf - "openssh-$REL") | gzip -1 >"$1"
	}
	repack "$TESTDIR/repacked.tar.gz"
	if sh "$GET" $REL $CONTENT $PINNED "$TESTDIR/ok2.tar.gz" \
	    "$TESTDIR/repacked.tar.gz" >"$TESTDIR/get.out" 2>&1; then
		contains repacked-tarball-accepted "$TESTDIR/get.out" \
		    "content pin $CONTENT verified"
	else
		fail repacked-tarball-accepted "`tail -n 3 "$TESTDIR/get.out"`"
	fi
	echo >>"$TESTDIR/re/openssh-$REL/sshd.c"
	repack "$TESTDIR/changed.tar.gz"
	if sh "$GET" $REL $CONTENT $PINNED "$TESTDIR/bad2.tar.gz" \
	    "$TESTDIR/changed.tar.gz" >"$TESTDIR/get.out" 2>&1; then
		fail changed-file-refused "a changed sshd.c passed the pin"
	else
		contains changed-file-refused "$TESTDIR/get.out" \
		    "expected content pin    $CONTENT" "actual   content pin" \
		    "refusing"
	fi
	check changed-file-not-kept test ! -f "$TESTDIR/bad2.tar.gz"
	truncate -s -1 "$TESTDIR/re/openssh-$REL/sshd.c"
	echo extra >"$TESTDIR/re/openssh-$REL/extra.c"
	repack "$TESTDIR/extra.tar.gz"
	if sh "$GET" $REL $CONTENT $PINNED "$TESTDIR/bad3.tar.gz" \
	    "$TESTDIR/extra.tar.gz" >"$TESTDIR/get.out" 2>&1; then
		fail extra-file-refused "a tarball with one file more passed"
	else
		contains extra-file-refused "$TESTDIR/get.out" "$CONTENT"
	fi
	rm -rf "$TESTDIR/re"
else
	skip pinned-tarball-accepted "no cached $TARBALL"
fi

# 5. Strict patch application, on a small tree of our own.
mkdir -p "$TESTDIR/tree" "$TESTDIR/p"
seq 1 40 >"$TESTDIR/tree/file.c"
cat >"$TESTDIR/p/good.patch" <<'EOF'
--- a/file.c
+++ b/file.c
@@ -9,3 +9,3 @@
 9
-10
+ten
 11
EOF
# Same hunk, but it claims line 7: applies only with an offset.
sed 's/^@@ -9,3 +9,3 @@/@@ -7,3 +7,3 @@/' "$TESTDIR/p/good.patch" \
    >"$TESTDIR/p/offset.patch"
# Context that matches only with fuzz.
sed 's/^ 11$/ eleven/' "$TESTDIR/p/good.patch" >"$TESTDIR/p/fuzz.patch"
for kind in offset fuzz; do
	rm -rf "$TESTDIR/t.$kind"
	cp -a "$TESTDIR/tree" "$TESTDIR/t.$kind"
	echo "$kind.patch" >"$TESTDIR/p/series"
	if sh "$APPLY" "$TESTDIR/p" "$TESTDIR/t.$kind" \
	    >"$TESTDIR/apply.out" 2>&1; then
		fail "patch-$kind-refused" "applied a patch that needs $kind"
	else
		contains "patch-$kind-refused" "$TESTDIR/apply.out" \
		    "$kind.patch" "file.c"
	fi
	check "patch-$kind-tree-untouched" cmp "$TESTDIR/tree/file.c" \
	    "$TESTDIR/t.$kind/file.c"
done
echo "good.patch" >"$TESTDIR/p/series"
check patch-exact-applied sh "$APPLY" "$TESTDIR/p" "$TESTDIR/tree"
check patch-exact-result grep -qx ten "$TESTDIR/tree/file.c"
echo "missing.patch" >"$TESTDIR/p/series"
sh "$APPLY" "$TESTDIR/p" "$TESTDIR/tree" >"$TESTDIR/apply.out" 2>&1 &&
    fail patch-missing-refused "a series naming a missing patch applied" ||
    contains patch-missing-refused "$TESTDIR/apply.out" "missing.patch"

# 6. configure passes OpenSSH's options through, and keeps ours.
if [ -x "$HPN_TOP/configure" ]; then
	mkdir "$TESTDIR/cfg"
	(cd "$TESTDIR/cfg" && cp -p "$HPN_TOP/configure" \
	    "$HPN_TOP/Makefile.in" "$HPN_TOP/configure.ac" . && \
	    cp -pR "$HPN_TOP/patches" \
	    "$HPN_TOP/build-aux" . &&
	    ./configure --prefix=/opt/hpn --sysconfdir=/etc/ssh \
	    --with-privsep-path=/run/sshd --with-pam "CFLAGS=-O1 -g" \
	    --with-openssh-version=$REL \
	    --with-openssh-tarball="$TESTDIR/bad.tar.gz") \
	    >"$TESTDIR/cfg.out" 2>&1
	grep '^OPENSSH_CONFIGURE_ARGS' "$TESTDIR/cfg/Makefile" \
	    >"$TESTDIR/args" 2>/dev/null
	if contains configure-pass-through "$TESTDIR/args" \
	    "'--prefix=/opt/hpn'" "'--sysconfdir=/etc/ssh'" \
	    "'--with-privsep-path=/run/sshd'" "'--with-pam'" "'CFLAGS=-O1 -g'"
	then
		:
	fi
	if grep -q 'openssh-tarball\|openssh-version' "$TESTDIR/args"; then
		fail configure-keeps-own-option "our option reached OpenSSH"
	else
		pass configure-keeps-own-option
	fi
	check configure-release-chosen grep -q \
	    "^OPENSSH_VERSION=[ 	]*$REL\$" "$TESTDIR/cfg/Makefile"
	# And make, with that corrupt tarball, stops before unpacking.
	if make -C "$TESTDIR/cfg" >"$TESTDIR/make.out" 2>&1; then
		fail make-corrupt-tarball "make succeeded with a corrupt tarball"
	else
		contains make-corrupt-tarball "$TESTDIR/make.out" "SHA-256" \
		    "$CONTENT" "$badsum"
	fi
	check make-corrupt-not-unpacked test ! -d "$TESTDIR/cfg/build/hpn"
	# A release we do not support is refused, naming those we do.
	if (cd "$TESTDIR/cfg" && ./configure --with-openssh-version=9.9p1) \
	    >"$TESTDIR/cfg9.out" 2>&1; then
		fail configure-unsupported-refused "configure accepted 9.9p1"
	else
		contains configure-unsupported-refused "$TESTDIR/cfg9.out" \
		    "9.9p1 is not supported" `sed -e 's/#.*//' \
		    "$HPN_TOP/patches/releases" | awk 'NF { print $1 }'`
	fi
else
	skip configure-pass-through "no generated configure in $HPN_TOP"
fi

# 7. make install DESTDIR= installs what OpenSSH's own install does:
# the same files as the unpatched twin's install.
if [ -f "$STOCK_BUILD/Makefile" ]; then
	make -C "$HPN_BUILD" install-nokeys DESTDIR="$TESTDIR/inst-hpn" \
	    >"$TESTDIR/inst.out" 2>&1 &&
	make -C "$STOCK_BUILD" install-nokeys DESTDIR="$TESTDIR/inst-stock" \
	    >>"$TESTDIR/inst.out" 2>&1
	rc=$?
	(cd "$TESTDIR/inst-hpn" 2>/dev/null && find . | sort) \
	    >"$TESTDIR/list.hpn"
	(cd "$TESTDIR/inst-stock" 2>/dev/null && find . | sort) \
	    >"$TESTDIR/list.stock"
	if [ $rc -ne 0 ]; then
		fail install-destdir "make install failed: `tail -n1 \
		    "$TESTDIR/inst.out"`"
	elif ! grep -q '/sbin/sshd$' "$TESTDIR/list.hpn"; then
		fail install-destdir "sshd was not installed"
	elif ! cmp -s "$TESTDIR/list.hpn" "$TESTDIR/list.stock"; then
		fail install-destdir "installed files differ from stock: `diff \
		    "$TESTDIR/list.stock" "$TESTDIR/list.hpn" | head -n 3`"
	else
		pass install-destdir
	fi
	hpnssh=`find "$TESTDIR/inst-hpn" -type f -name ssh | head -n 1`
	check installed-ssh-is-patched sh -c "'$hpnssh' -V 2>&1 | grep -q hpn1"
else
	skip install-destdir "no stock twin at $STOCK_BUILD"
fi
exit 0
