set terminal pngcairo size 900,540 noenhanced
set output 'benchmarks/results/2026-11-22-2c-4r/speedup.png'
set title "gencoll on vm: 4 ranks, 2 cores, 2026-11-22"
set logscale x 2
set format x '%.0b%BB'
set xlabel 'message size'
set ylabel 'speedup over MPICH default (MPICH time / tuned time)'
set grid
set key outside right
f(x)=1
plot 'benchmarks/results/2026-11-22-2c-4r/speedup.dat' index 0 using 1:2 with linespoints title 'allgather', 'benchmarks/results/2026-11-22-2c-4r/speedup.dat' index 1 using 1:2 with linespoints title 'allreduce', 'benchmarks/results/2026-11-22-2c-4r/speedup.dat' index 2 using 1:2 with linespoints title 'bcast', 'benchmarks/results/2026-11-22-2c-4r/speedup.dat' index 3 using 1:2 with linespoints title 'reduce', f(x) with lines dt 2 lc rgb 'gray' title '1.0'
