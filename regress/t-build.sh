#!/bin/sh
#
# t-build.sh: our build's guards and promises.  A corrupt tarball stops
# the build before unpacking and names both SHA-256s; an unreachable
# tarball lists what was tried; a patch needing fuzz or an offset stops
# naming the patch and the file; configure passes OpenSSH's options
# through; "make install DESTDIR=" installs what OpenSSH's own does.

. "`dirname "$0"`/lib.sh"

PINNED=021a2e709a0edf4250b1256bd5a9e500411a90dddabea830ed59cef90eb9d85c
GET="$HPN_TOP/build-aux/get-openssh.sh"
APPLY="$HPN_TOP/build-aux/apply-series.sh"
TARBALL="$HPN_TOP/build/openssh-10.0p1.tar.gz"

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
if sh "$GET" 10.0p1 $PINNED "$TESTDIR/dest.tar.gz" "$TESTDIR/bad.tar.gz" \
    >"$TESTDIR/get.out" 2>&1; then
	fail corrupt-tarball-refused "get-openssh.sh accepted a corrupt file"
else
	contains corrupt-tarball-refused "$TESTDIR/get.out" "SHA-256" \
	    "$PINNED" "$badsum" "$TESTDIR/bad.tar.gz"
fi
check corrupt-tarball-not-kept test ! -f "$TESTDIR/dest.tar.gz"

# 2. A corrupt cached copy is not used either.
cp "$TESTDIR/bad.tar.gz" "$TESTDIR/cache.tar.gz"
if sh "$GET" 10.0p1 $PINNED "$TESTDIR/cache.tar.gz" >"$TESTDIR/get.out" 2>&1
then
	fail corrupt-cache-refused "a corrupt cached copy was accepted"
else
	contains corrupt-cache-refused "$TESTDIR/get.out" "$PINNED" "$badsum"
fi

# 3. Nothing reachable: no file, no cache, a mirror that refuses, an
# apt-get that has no deb-src.  The message lists every source tried.
mkdir "$TESTDIR/bin"
for p in sh sha256sum awk mktemp cp mv dirname basename grep head cat rm \
    ls mkdir sed; do
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
    sh "$GET" 10.0p1 $PINNED "$TESTDIR/none.tar.gz" >"$TESTDIR/get.out" 2>&1
then
	fail unreachable-explained "succeeded with no source reachable"
else
	contains unreachable-explained "$TESTDIR/get.out" "cached copy" \
	    "http://127.0.0.1:1/openssh.tar.gz" "apt-get source" "deb-src" \
	    "--with-openssh-tarball"
fi

# 4. The pinned tarball itself passes (it is what make used).
if [ -f "$TARBALL" ]; then
	check pinned-tarball-accepted sh "$GET" 10.0p1 $PINNED \
	    "$TESTDIR/ok.tar.gz" "$TARBALL"
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
	if grep -q openssh-tarball "$TESTDIR/args"; then
		fail configure-keeps-own-option "our option reached OpenSSH"
	else
		pass configure-keeps-own-option
	fi
	# And make, with that corrupt tarball, stops before unpacking.
	if make -C "$TESTDIR/cfg" >"$TESTDIR/make.out" 2>&1; then
		fail make-corrupt-tarball "make succeeded with a corrupt tarball"
	else
		contains make-corrupt-tarball "$TESTDIR/make.out" "SHA-256" \
		    "$PINNED" "$badsum"
	fi
	check make-corrupt-not-unpacked test ! -d "$TESTDIR/cfg/build/hpn"
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
	elif ! grep -q '/sshd-session$' "$TESTDIR/list.hpn"; then
		fail install-destdir "sshd-session was not installed"
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
