#!/bin/sh
#
# lib-window.sh: what the window suites (t-window.sh, t-windowlong.sh)
# share, sourced after lib.sh and bench/lfn.sh.  The caller sets LFN_MBIT
# and LFN_RTT_MS (the link peer_budget() judges rates and round trips
# against) and DATA (the file the transfers carry).
#
#   grew / did_not_grow     the largest window logged, against stock's
#   peer_budget             the window budgets logged, each checked
#   fixed_budget            the fixed need without TCP_INFO
#   same                    byte-exact against DATA
#   lfn_upload              an upload into sshd with all three checks

SSH="$HPN_BUILD/ssh"
STOCK_WINDOW=2097152
STOCK_PEER_MAX=8257536		# HPN_WINDOW_STOCK_MAX
PATCHED_BASE=8388608		# HPN_WINDOW_HEADROOM
WINDOW_MAX=268435456		# HPNBufferSize's default

# grew NAME LOG MARK [MAX]: pass if the window grew past stock's
# and no further than MAX.
grew() {
	_w=`max_window "$2" "$3"`
	if [ -z "$_w" ] || [ "$_w" -le $STOCK_WINDOW ]; then
		fail "$1" "window did not grow past $STOCK_WINDOW (${_w:-no growth logged})"
	elif [ -n "${4:-}" ] && [ "$_w" -gt "$4" ]; then
		fail "$1" "window grew to $_w, past $4"
	else
		pass "$1"
		echo "# $1: window grew to $_w"
	fi
}

did_not_grow() {
	_w=`max_window "$2" "$3"`
	if [ -n "$_w" ]; then
		fail "$1" "window grew to $_w with HPNDisabled"
	else
		pass "$1"
	fi
}

# peer_budget NAME LOG MARK KIND BASE [MAX]: the window budgets
# logged at debug2 for a KIND (stock or patched) peer (lib.sh's
# budget_lines), each of which must add up (budget_problem), with headroom
# BASE (at least) and HPNBufferSize MAX (default WINDOW_MAX), the rate
# within the link's (50% slack for sampling) and the round trip within
# what lfn_up accepts; at least one rate must be above zero (the budget
# grew as the link proved its rate) unless the need reached MAX at once,
# and no window growth may leave the
# windows' sum above the budget.  Sets CAP to the largest budget.
peer_budget() {
	_max=${6:-$WINDOW_MAX}
	_side=client
	[ "$2" != "$SSHD_LOG" ] || _side=server
	_caps=`budget_lines "$2" $3 $4`
	CAP=0
	NEED=0
	if [ -z "$_caps" ]; then
		fail "$1" "no $4-peer budget with rate and round trip logged"
		return
	fi
	# The rate counts what TCP delivered in order: after a loss is
	# repaired a span also counts data that arrived in the span before
	# (hpn-window.c), and both spans of the lower-of-two rule can carry
	# such a burst: a short link's rates have been seen up to 15% above
	# it (make check-releases, 10.0p1, 2026-11-27).  And on a starved
	# machine the link (bench/tunlink.c) delivers what fell due while it
	# waited for a CPU at once, so a span can count more than the link
	# carried in it: 31% above (CI, three releases at once on two
	# cores, 9.2p1, 2026-11-29).  50% slack: a rate in the wrong unit or
	# counted twice is still caught.
	_ratemax=`expr $LFN_MBIT \* 125000 \* 3 / 2`
	_rttlo=`expr \( $LFN_RTT_MS - 2 \) \* 1000`
	_rtthi=`expr \( $LFN_RTT_MS + $LFN_RTT_MS / 5 + 5 \) \* 1000`
	_why=`printf '%s\n' "$_caps" | {
		_moved=0
		while read _b _n _i _k _pr _h _r _t _m _l _s _x _w _z; do
			_p=$(budget_problem $_b $_n $_i $_k $_pr $_h $_r $_t \
			    $_m $_l $_s $_x $_w $_z $5 $_max $_side)
			if [ -n "$_p" ]; then
				echo "$_p"
			elif [ $_r -gt $_ratemax ]; then
				echo "rate $_r B/s above the link's $LFN_MBIT Mbit/s"
			elif [ $_t -lt $_rttlo ] || [ $_t -gt $_rtthi ]; then
				echo "min_rtt $_t us, link $LFN_RTT_MS ms"
			fi
			[ $_r -eq 0 ] && [ $_n -lt $_max ] || _moved=1
		done
		[ $_moved = 1 ] || echo "no budget with a rate above 0" \
		    "or at HPNBufferSize"
	} | head -n 1`
	[ -n "$_why" ] || _why=`window_sums "$2" $3`
	CAP=`printf '%s\n' "$_caps" | cut -d' ' -f1 | sort -n | tail -n 1`
	NEED=`printf '%s\n' "$_caps" | cut -d' ' -f2 | sort -n | tail -n 1`
	if [ -n "$_why" ]; then
		fail "$1" "$_why"
	else
		pass "$1"
		echo "# $1: `printf '%s\n' "$_caps" | wc -l` budgets logged," \
		    "largest $CAP: `printf '%s\n' "$_caps" |
		    sort -n | tail -n 1 | awk '{ print "need " $2 " = " $5 \
		    " + " $6 " (" $7 " B/s * " $8 " us), " $4 " idle" }'`"
	fi
}

# fixed_budget NAME LOG KIND NEED: LOG has KIND's fixed need NEED (no
# TCP_INFO) and no rate-based budget, and the window grew to exactly NEED.
fixed_budget() {
	_w=`max_window "$2"`
	if ! grep -q "$3 peer: window budget [0-9]* = need $4 + [0-9]* for [0-9]* idle channels; need fixed (no TCP_INFO)" "$2"; then
		fail "$1" "no fixed need $4 logged: `grep "peer: window budget" \
		    "$2" | head -n 1`"
	elif grep -q "peer: window budget .*need = per_rtt" "$2"; then
		fail "$1" "a rate-based budget without a socket"
	elif [ "${_w:-0}" -ne $4 ]; then
		fail "$1" "window grew to ${_w:-nothing}, not to $4"
	else
		pass "$1"
	fi
}

# same NAME FILE: byte-exact check against DATA.
same() {
	check_same "$1" "$DATA" "$2"
	rm -f "$2"
}

# lfn_upload NAME KIND BASE WHAT SSH [SSH-ARG...]: SSH (WHAT in a failure)
# uploads $DATA into sshd: byte-exact (NAME), the budgets sshd logs for a
# KIND peer with BASE (NAME-budget, peer_budget) and the window's growth
# up to the need (NAME-window, grew).
lfn_upload() {
	_up_name="$1"
	_up_kind="$2"
	_up_base="$3"
	_up_what="$4"
	shift 4
	_up_from=`log_mark "$SSHD_LOG"`
	if lfn_a "$@" hpntest "cat > $TESTDIR/up" <"$DATA" \
	    2>"$TESTDIR/err"; then
		same "$_up_name" "$TESTDIR/up"
		peer_budget "$_up_name-budget" "$SSHD_LOG" $_up_from $_up_kind \
		    $_up_base
		grew "$_up_name-window" "$SSHD_LOG" $_up_from $NEED
	else
		fail "$_up_name" "$_up_what failed: `tail -n 1 "$TESTDIR/err"`"
	fi
}
