/*
** cpus.c — how many CPUs this process can keep busy at once: the ones its
** affinity mask allows (a taskset, a container's cpuset), and no more than
** its cgroup's CPU quota gives it time for (a container limited to two
** CPUs on a machine of sixty-four).  The threads' rules (the import's
** scanning thread, scanpipe.c) are rules for a number of cores; a quota
** they did not see would have them start threads that only take turns.
**
** The quota is cgroup v2's cpu.max ("max 100000", or "150000 100000": µs
** of CPU per period) or v1's cpu.cfs_quota_us / cpu.cfs_period_us (-1: no
** quota), read for the process's cgroup (/proc/self/cgroup) and each of
** its ancestors up to the mount's root, the smallest one applying, in
** CPUs rounded up.  Any file missing or unreadable counts as no quota.
*/
#include "profsum_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
# include <sched.h>
#endif

#if defined(__linux__)
/* The first line of file zPath (at most nOut - 1 bytes, NUL-terminated,
** without its newline): 1, or 0 when it cannot be read. */
static int cgLine(const char *zPath, char *zOut, size_t nOut){
  FILE *f = fopen(zPath, "r");
  int ok;
  if( f==0 ) return 0;
  ok = fgets(zOut, (int)nOut, f)!=0;
  fclose(f);
  if( ok ) zOut[strcspn(zOut, "\n")] = 0;
  return ok;
}

/* The CPUs a CPU quota of quota µs per period µs allows: rounded up, at
** least 1; 0 for no quota (quota <= 0 or period <= 0). */
static int cgQuotaCpus(long long quota, long long period){
  long long n;
  if( quota<=0 || period<=0 ) return 0;
  n = (quota + period - 1) / period;
  return n<1 ? 1 : n>4096 ? 4096 : (int)n;
}

/* The smallest CPU quota over the cgroup at zDir ("" for the root, else
** "/a/b" under the hierarchy's mount zRoot) and its ancestors up to that
** root, in CPUs (see cgQuotaCpus), from each one's cgroup v2 cpu.max
** ("max 100000" or "150000 100000"), or with bV1 its pair
** cpu.cfs_quota_us / cpu.cfs_period_us.  0 when none sets one. */
static int cgQuotaUp(const char *zRoot, const char *zDir, int bV1){
  char zPath[1024], zLine[128];
  size_t nRoot = strlen(zRoot), n = strlen(zDir);
  int best = 0;
  if( nRoot + n + 32 > sizeof(zPath) ) return 0;
  memcpy(zPath, zRoot, nRoot);
  memcpy(zPath + nRoot, zDir, n);
  n += nRoot;
  while( n>=nRoot ){
    long long quota = 0, period = 0;
    int c;
    if( !bV1 ){
      memcpy(zPath + n, "/cpu.max", 9);
      if( cgLine(zPath, zLine, sizeof(zLine)) && strncmp(zLine, "max", 3)!=0 ){
        if( sscanf(zLine, "%lld %lld", &quota, &period)!=2 ) quota = 0;
      }
    }else{
      memcpy(zPath + n, "/cpu.cfs_quota_us", 18);
      if( cgLine(zPath, zLine, sizeof(zLine)) ) quota = atoll(zLine);
      memcpy(zPath + n, "/cpu.cfs_period_us", 19);
      if( quota>0 && cgLine(zPath, zLine, sizeof(zLine)) ) period = atoll(zLine);
    }
    c = cgQuotaCpus(quota, period);
    if( c>0 && (best==0 || c<best) ) best = c;
    /* the parent: up to the last '/' (the root's own files last) */
    if( n==nRoot ) break;
    while( n>nRoot && zPath[n-1]!='/' ) n--;
    if( n>nRoot ) n--;           /* drop the '/' too */
  }
  return best;
}

/* The CPUs a CPU quota of this process's cgroup allows (cgroup v2, or
** v1's cpu controller), 0 when none is set or it cannot be read.  The
** files read are under PROFSUM_CGROUP_ROOT when that is set (tests build
** a tree there: its "self_cgroup" stands for /proc/self/cgroup and its
** "fs" for /sys/fs/cgroup), else the system's. */
static int cgQuotaCpusOfSelf(void){
  const char *zEnv = getenv("PROFSUM_CGROUP_ROOT");
  char zSelf[512], zFs[512], zLine[1024];
  FILE *f;
  int best = 0;
  if( zEnv && zEnv[0] ){
    if( strlen(zEnv) > 400 ) return 0;
    snprintf(zSelf, sizeof(zSelf), "%s/self_cgroup", zEnv);
    snprintf(zFs, sizeof(zFs), "%s/fs", zEnv);
  }else{
    snprintf(zSelf, sizeof(zSelf), "/proc/self/cgroup");
    snprintf(zFs, sizeof(zFs), "/sys/fs/cgroup");
  }
  f = fopen(zSelf, "r");
  if( f==0 ) return 0;
  while( fgets(zLine, sizeof(zLine), f) ){
    /* "0::/path" (v2), or "N:cpu,cpuacct:/path" (v1) */
    char *zCtl = strchr(zLine, ':'), *zDir;
    int c = 0;
    if( zCtl==0 ) continue;
    zCtl++;
    zDir = strchr(zCtl, ':');
    if( zDir==0 ) continue;
    *zDir++ = 0;
    zDir[strcspn(zDir, "\n")] = 0;
    if( zDir[0]!='/' ) continue;
    if( zDir[1]==0 ) zDir++;      /* the root: its own files */
    if( zCtl[0]==0 ){
      c = cgQuotaUp(zFs, zDir, 0);
    }else{
      /* v1: the cpu controller's hierarchy, mounted as "cpu" or with
      ** cpuacct beside it */
      const char *z = zCtl;
      int bCpu = 0;
      while( *z ){
        size_t k = strcspn(z, ",");
        if( k==3 && memcmp(z, "cpu", 3)==0 ) bCpu = 1;
        z += k + (z[k]==',');
      }
      if( bCpu ){
        char zMnt[600];
        snprintf(zMnt, sizeof(zMnt), "%s/%s", zFs, zCtl);
        c = cgQuotaUp(zMnt, zDir, 1);
        if( c==0 ){
          snprintf(zMnt, sizeof(zMnt), "%s/cpu", zFs);
          c = cgQuotaUp(zMnt, zDir, 1);
        }
      }
    }
    if( c>0 && (best==0 || c<best) ) best = c;
  }
  fclose(f);
  return best;
}
#endif

/* See profsum_int.h. */
int profsumCpusUsable(void){
  int n = 0;
#if defined(__linux__)
  cpu_set_t set;
  int q;
  CPU_ZERO(&set);
  if( sched_getaffinity(0, sizeof(set), &set)==0 ) n = CPU_COUNT(&set);
#endif
  if( n<=0 ){
    long m = sysconf(_SC_NPROCESSORS_ONLN);
    n = m<1 ? 1 : m>4096 ? 4096 : (int)m;
  }
#if defined(__linux__)
  q = cgQuotaCpusOfSelf();
  if( q>0 && q<n ) n = q;
#endif
  return n;
}

