set terminal pngcairo size 900,540 noenhanced
set output 'speedup.png'
set title "2026-11-30-h200-emu8x1-1gbit-8r-partial rescored by this build's simulator"
set logscale x 2
set format x '%.0b%BB'
set xlabel 'message size'
set ylabel 'speedup over MPICH default (MPICH time / tuned time)'
set grid
set key outside right
f(x)=1
plot f(x) with lines dt 2 lc rgb 'gray' title '1.0'
