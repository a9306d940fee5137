#!/bin/sh
# Regenerates the audit's fixture trees: two 2-socket, 2-node, 8-CPU machines,
# one with settings a tuned server would not have (untuned/) and one tuned (tuned/).
# Run from this directory: sh make-trees.sh
set -e
w() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" > "$1"; }
for t in untuned tuned; do
  rm -rf "$t"
  C=$t/sys/devices/system/cpu
  N=$t/sys/devices/system/node
  w $C/online 0-7; w $C/possible 0-7; w $C/present 0-7
  w $N/online 0-1; w $N/possible 0-1; w $N/has_cpu 0-1; w $N/has_memory 0-1
  for cpu in 0 1 2 3 4 5 6 7; do
    pkg=$((cpu / 4)); core=$(( (cpu % 4) / 2 )); first=$(( cpu - cpu % 2 ))
    T=$C/cpu$cpu/topology
    w $T/physical_package_id $pkg; w $T/core_id $core; w $T/die_id 0
    w $T/thread_siblings_list "$first-$((first + 1))"
    w $T/core_siblings_list "$((pkg * 4))-$((pkg * 4 + 3))"
    w $T/package_cpus_list "$((pkg * 4))-$((pkg * 4 + 3))"
    w $C/cpu$cpu/online 1
  done
  for n in 0 1; do
    w $N/node$n/cpulist "$((n * 4))-$((n * 4 + 3))"
    if [ $n = 0 ]; then w $N/node$n/distance "10 21"; else w $N/node$n/distance "21 10"; fi
  done
  w $t/proc/version "Linux version 6.1.0-test (gcc) #1 SMP"
  w $t/proc/sys/kernel/osrelease 6.1.0-test
  printf 'processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Test CPU\n' > $t/proc/cpuinfo
done

# --- untuned: what the audit should complain about
t=untuned; C=$t/sys/devices/system/cpu; N=$t/sys/devices/system/node
w $N/node0/meminfo "Node 0 MemTotal:       67108864 kB
Node 0 MemFree:         2097152 kB
Node 0 MemUsed:        65011712 kB"
w $N/node1/meminfo "Node 1 MemTotal:       67108864 kB
Node 1 MemFree:        60000000 kB
Node 1 MemUsed:         7108864 kB"
w $t/proc/meminfo "MemTotal:       134217728 kB
MemFree:        62097152 kB
SwapTotal:       8388608 kB
SwapFree:        8388608 kB"
w $t/proc/cmdline "BOOT_IMAGE=/vmlinuz-6.1.0 root=/dev/sda1 ro quiet"
w $t/sys/kernel/mm/transparent_hugepage/enabled "[always] madvise never"
w $t/sys/kernel/mm/transparent_hugepage/defrag "[always] defer defer+madvise madvise never"
w $t/proc/sys/kernel/numa_balancing 1
w $t/proc/sys/vm/zone_reclaim_mode 1
w $t/proc/sys/vm/swappiness 60
w $C/intel_pstate/no_turbo 1
w $C/intel_pstate/status active
w $C/cpuidle/current_driver intel_idle
w $C/cpuidle/current_governor menu
w $C/smt/control on
w $C/smt/active 1
for cpu in 0 1 2 3 4 5 6 7; do
  w $C/cpu$cpu/cpufreq/scaling_driver intel_pstate
  if [ $cpu -lt 4 ]; then g=powersave; else g=performance; fi
  w $C/cpu$cpu/cpufreq/scaling_governor $g
  w $C/cpu$cpu/cpufreq/energy_performance_preference balance_power
  w $C/cpu$cpu/power/energy_perf_bias 8
  i=0
  for s in "POLL 0" "C1 2" "C1E 10" "C6 133"; do
    set -- $s
    w $C/cpu$cpu/cpuidle/state$i/name $1; w $C/cpu$cpu/cpuidle/state$i/latency $2; w $C/cpu$cpu/cpuidle/state$i/disable 0
    i=$((i + 1))
  done
done
for n in 0 1; do
  H=$N/node$n/hugepages/hugepages-2048kB
  if [ $n = 0 ]; then w $H/nr_hugepages 1024; w $H/free_hugepages 1024; else w $H/nr_hugepages 0; w $H/free_hugepages 0; fi
  H=$N/node$n/hugepages/hugepages-1048576kB; w $H/nr_hugepages 0; w $H/free_hugepages 0
done
mkdir -p $t/sys/class/iommu/dmar0 $t/sys/class/iommu/dmar1
for g in 0 1 2 3; do w $t/sys/kernel/iommu_groups/$g/type DMA-FQ; done

# --- tuned: what a tuned latency/database server would have
t=tuned; C=$t/sys/devices/system/cpu; N=$t/sys/devices/system/node
for n in 0 1; do
w $N/node$n/meminfo "Node $n MemTotal:       67108864 kB
Node $n MemFree:        40000000 kB
Node $n MemUsed:        27108864 kB"
done
w $t/proc/meminfo "MemTotal:       134217728 kB
MemFree:        80000000 kB
SwapTotal:             0 kB
SwapFree:              0 kB"
w $t/proc/cmdline "BOOT_IMAGE=/vmlinuz-6.1.0 root=/dev/sda1 ro iommu=pt intel_iommu=on isolcpus=managed_irq,domain,2-3,6-7 nohz_full=2-3,6-7 -- init-arg"
w $t/sys/kernel/mm/transparent_hugepage/enabled "always [madvise] never"
w $t/sys/kernel/mm/transparent_hugepage/defrag "always defer [defer+madvise] madvise never"
w $t/proc/sys/kernel/numa_balancing 0
w $t/proc/sys/vm/zone_reclaim_mode 0
w $t/proc/sys/vm/swappiness 1
w $C/intel_pstate/no_turbo 0
w $C/intel_pstate/status active
w $C/cpuidle/current_driver intel_idle
w $C/cpuidle/current_governor menu
w $C/smt/control off
w $C/smt/active 0
for cpu in 0 1 2 3 4 5 6 7; do
  w $C/cpu$cpu/cpufreq/scaling_driver intel_pstate
  w $C/cpu$cpu/cpufreq/scaling_governor performance
  w $C/cpu$cpu/cpufreq/energy_performance_preference performance
  i=0
  for s in "POLL 0 0" "C1 2 0" "C1E 10 0" "C6 133 1"; do
    set -- $s
    w $C/cpu$cpu/cpuidle/state$i/name $1; w $C/cpu$cpu/cpuidle/state$i/latency $2; w $C/cpu$cpu/cpuidle/state$i/disable $3
    i=$((i + 1))
  done
done
for n in 0 1; do
  H=$N/node$n/hugepages/hugepages-2048kB; w $H/nr_hugepages 512; w $H/free_hugepages 100
done
mkdir -p $t/sys/class/iommu/dmar0
for g in 0 1 2 3; do w $t/sys/kernel/iommu_groups/$g/type identity; done
