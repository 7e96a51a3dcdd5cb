set terminal pngcairo size 900,540 noenhanced
set output 'speedup.png'
set title "gencoll on vm: 2 ranks on 2 host(s) (emulated, 1gbit NICs), 2 cores, 2026-12-01"
set logscale x 2
set format x '%.0b%BB'
set xlabel 'message size'
set ylabel 'speedup over MPICH default (MPICH time / tuned time)'
set grid
set key outside right
f(x)=1
plot 'speedup.dat' index 0 using 1:2 with linespoints title 'allgather', 'speedup.dat' index 1 using 1:2 with linespoints title 'allreduce', 'speedup.dat' index 2 using 1:2 with linespoints title 'bcast', 'speedup.dat' index 3 using 1:2 with linespoints title 'reduce', f(x) with lines dt 2 lc rgb 'gray' title '1.0'
