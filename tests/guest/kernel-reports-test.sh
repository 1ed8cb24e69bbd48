#!/usr/bin/env bash
# Host test of tests/guest/kernel-reports.sh: an OOM report inside its
# test's "mrcache-expect: oom-kill" brackets passes; the same report
# outside them, a soft lockup, RCU stall or hung task inside them, and a
# stack that is not the OOM report's all fail.  Prints PASS/FAIL lines;
# exits 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
status=0
oom='[   50.000001] test-mrmon-oom invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=1000
[   50.000002] CPU: 1 PID: 321 Comm: test-mrmon-oom Tainted: G           OE      6.1.0-57-amd64 #1
[   50.000003] Call Trace:
[   50.000004]  <TASK>
[   50.000005]  dump_stack_lvl+0x44/0x5c
[   50.000006]  dump_header+0x4a/0x211
[   50.000007]  oom_kill_process.cold+0xb/0x10
[   50.000008]  </TASK>
[   50.000009] Memory cgroup out of memory: Killed process 321 (test-mrmon-oom) total-vm:80000kB'
begin='[   49.9] mrcache-expect: oom-kill begin'
end='[   80.0] mrcache-expect: oom-kill end'
lockup='[   60.0] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [oom_reaper:35]'
stall='[   60.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
hung='[   60.0] INFO: task kworker/0:1:12 blocked for more than 120 seconds.'
trace='[   60.1] Call Trace:'
# expect NAME clean|report LOG
expect() {
	local got=clean
	printf '%s\n' "$3" | bash "$here/kernel-reports.sh" -q && got=report
	if [ "$got" = "$2" ]; then
		echo "PASS kernel-reports/$1"
	else
		echo "FAIL kernel-reports/$1: $got, expected $2"
		status=1
	fi
}
expect oom-expected clean "$begin
$oom
$end"
expect oom-unbracketed report "$oom"
expect oom-then-lockup report "$begin
$oom
$lockup
$trace
$end"
expect oom-then-stall report "$begin
$oom
$stall
$end"
expect oom-then-hung-task report "$begin
$oom
$hung
$end"
expect stack-outside-the-oom-report report "$begin
$oom
$trace
$end"
expect after-the-brackets report "$begin
$oom
$end
$oom"
expect empty clean ""
exit $status
