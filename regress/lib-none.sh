#!/bin/sh
#
# lib-none.sh: what the None suites share (t-none.sh, t-noneswitch.sh,
# t-nonemac.sh), sourced after lib.sh.

SIZE=${HPN_XFER_BYTES:-$XFER}
SSH="$HPN_BUILD/ssh"
NONE="-o NoneEnabled=yes -o NoneSwitch=yes"
WARN="WARNING: ENABLED NONE CIPHER"
WARNMAC="WARNING: ENABLED NONE MAC"
DATA=`make_data $SIZE`
