# Sourced by scripts/harness_checks.sh and scripts/netns_checks.sh, which
# define run_check NAME ARGS... (one run into $store/NAME, its exit status
# in got), wrong_status NAME WANT and checks (how their messages name a
# check: "harness check", "netns check").
#
# expect_caught NAME "SEED..." KIND ARGS...: a negative control whose
# violation is certain only once its fault took effect in a certain way
# (scripts/control_applied.py KIND says, from the run's history, whether
# it did). Each seed in turn: caught (exit 1) passes; a valid run whose
# fault took effect fails (the checker missed it); a valid run whose fault
# did not take effect moves on to the next seed; any other status, or no
# seed left, fails. A control that is not caught is never a pass. KIND -
# is for a control whose violation no condition in the history makes
# certain (the member nemesis without the waiting rule: whether two
# configurations two changes apart both grant while the older one's
# leases run is timing): a valid run moves on to the next seed, and none
# caught fails.
expect_caught() {
  local name=$1 seeds=$2 kind=$3 s applied; shift 3
  for s in $seeds; do
    printf -- '--- %s (seed %s)\n' "$name" "$s"
    run_check "$name" "$@" --seed "$s"
    case $got in
      1) printf 'ok: %s exited 1 as expected (seed %s)\n' "$name" "$s"; return 0 ;;
      0) if [ "$kind" = - ]; then
           echo "$name: seed $s stayed valid; the next seed"
           continue
         fi
         if applied=$(scripts/control_applied.py "$kind" "$store/$name/latest"); then
           echo "$checks '$name': seed $s stayed valid although its fault took effect ($applied): the checker missed it" >&2
           exit 1
         fi
         echo "$name: seed $s stayed valid, its fault did not take effect ($applied); the next seed" ;;
      *) wrong_status "$name" 1 ;;
    esac
  done
  echo "$checks '$name': on none of seeds $seeds did the fault take effect" >&2
  exit 1
}
