#!/usr/bin/env python3
"""Scores the simulator against a sweep alone (a main-job run cut short, with
no tuned-file run for analyze.py): per collective and size of at least
MIN_BYTES, the simulator's pick among the measured configurations, the
selection quality (best measured / measured time of the pick), Spearman's rank
correlation of predicted and measured times, and measured / predicted of the
pick; then their summary.

usage: score_sweep.py SWEEP_CSV PREDICTED_CSV [MIN_BYTES]
  SWEEP_CSV      a main job's sweep.csv (gencoll-bench --csv)
  PREDICTED_CSV  gencoll-tune's NAME.csv for the same profile and shape
  MIN_BYTES      smallest size scored (default 32768)
"""
import csv,sys,math,collections
if len(sys.argv) not in (3, 4): sys.exit(__doc__)
sweep,pred=sys.argv[1],sys.argv[2]
minb=int(sys.argv[3]) if len(sys.argv)>3 else 32768
P={}
for r in csv.DictReader(open(pred)):
    P[(r['collective'],r['algorithm'],int(r['radix']),int(r['size_bytes']))]=float(r['time_us'])
M=collections.defaultdict(dict)
for r in csv.DictReader(open(sweep)):
    c,cfg,b=r['collective'],r['config'],int(r['bytes'])
    if cfg=='native' : continue
    if cfg.startswith('mpich:'):
        a=cfg[6:]; ks=[kk for (cc,aa,kk,bb) in P if cc==c and aa==a and bb==b]
        if not ks: continue
        key=(c,a,ks[0],b)
    else:
        a,k=cfg.split(':'); key=(c,a,int(k),b)
    if key in P: M[(c,b)][cfg]=(float(r['median_us']),P[key])
def rank(v):
    o=sorted(range(len(v)),key=lambda i:v[i]); r=[0]*len(v)
    for i,j in enumerate(o): r[j]=i
    return r
def spear(a,b):
    ra,rb=rank(a),rank(b); n=len(a); ma=sum(ra)/n; mb=sum(rb)/n
    num=sum((x-ma)*(y-mb) for x,y in zip(ra,rb)); den=math.sqrt(sum((x-ma)**2 for x in ra)*sum((y-mb)**2 for y in rb))
    return num/den if den else 0
qs=[];rhos=[];rat=[]
for (c,b),d in sorted(M.items()):
    if b<minb: continue
    cfgs=list(d); meas=[d[x][0] for x in cfgs]; pr=[d[x][1] for x in cfgs]
    pick=min(cfgs,key=lambda x:d[x][1]); q=min(meas)/d[pick][0]; rho=spear(meas,pr)
    qs.append(q); rhos.append(rho); rat.append(d[pick][0]/d[pick][1])
    print(f"{c:9s} {b:8d} pick {pick:34s} q {q:.3f} rho {rho:.2f} meas/pred {d[pick][0]/d[pick][1]:.2f}")
g=lambda v: math.exp(sum(map(math.log,v))/len(v))
print(f"quality gm {g(qs):.3f} worst {min(qs):.3f}; rho mean {sum(rhos)/len(rhos):.2f} worst {min(rhos):.2f}; meas/pred gm {g(rat):.2f}, within 15% {sum(1 for x in rat if abs(x-1)<=.15)}/{len(rat)}")
