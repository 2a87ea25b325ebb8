#!/usr/bin/env bash
# What bash offers for the last word of a dualcam command line, with the completion script
# SCRIPT, as bash itself would call it on Tab (one candidate a line):
#   bash Tests/complete.sh SCRIPT dualcam compose --preset ul
# `dualcam` must be on PATH: the script asks it for cameras, controls and bench cases.
set -euo pipefail
script=$1; shift
bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
         _dualcam "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
         printf "%s\n" "${COMPREPLY[@]}"' _ "$script" "$@"
