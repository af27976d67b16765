/*
** measure.c — run one command and measure it, for bench/run.sh.
**
**   measure RESULT STDOUT STDERR CMD [ARG...]
**
** Forks, runs CMD with stdout and stderr sent to the files given, waits for
** it with wait4(), and writes one line to RESULT:
**
**   <wall seconds> <peak RSS KB> <user CPU s> <system CPU s> <minor faults>
**
** (minor faults: the pages the command touched for the first time, file
** pages already in the page cache included; see -p below for what one
** costs).
**
** The wall time is read (CLOCK_MONOTONIC) right before the fork and right
** after the wait: the command and the cost of starting it, not the cost of
** starting a timer (GNU time, started by the shell between two clock reads,
** added about 2.5 ms to every run: a third of a 10 MB scan).  Peak RSS and
** CPU times are the kernel's rusage of the command and all its threads, as
** /usr/bin/time reports them; this program is small, so the RSS of the
** forked child before its exec (which the kernel counts) is about 1 MB, as
** under GNU time (a fork from Python would count Python's 9 MB).
**
**   measure -p PAGES
**
** prints the microseconds one fresh page of anonymous memory costs on this
** machine: PAGES pages are mapped, written once each (one page fault each)
** and unmapped, five times; the best of the five, per page.  On a virtual
** machine whose host backs the guest's memory lazily a fault costs ten
** times what it costs on bare metal, and every page a command touches
** counts in its wall time.
**
** Exit status: the command's (128 + signal when it was killed), 127 when it
** could not be started, 2 on a usage error.
*/
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(void){
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec/1e9;
}

/* measure -p PAGES: see the header. */
static int pageCost(long nPage){
  double best = -1;
  int k;
  if( nPage<=0 ){ fprintf(stderr, "measure: -p needs a page count\n"); return 2; }
  for(k=0; k<5; k++){
    long ps = sysconf(_SC_PAGESIZE), i;
    size_t n = (size_t)nPage*(size_t)ps;
    volatile char *a;
    double t0 = seconds(), t;
    a = mmap(0, n, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
    if( a==MAP_FAILED ){ perror("measure: mmap"); return 2; }
    for(i=0; i<nPage; i++) a[(size_t)i*(size_t)ps] = 1;
    t = seconds() - t0;
    munmap((void*)a, n);
    if( best<0 || t<best ) best = t;
  }
  printf("%.3f\n", best*1e6/(double)nPage);
  return 0;
}

int main(int argc, char **argv){
  int fo, fe, status = 0;
  double t0, t1;
  pid_t pid;
  struct rusage ru;
  FILE *f;
  if( argc==3 && argv[1][0]=='-' && argv[1][1]=='p' && argv[1][2]==0 ){
    return pageCost(atol(argv[2]));
  }
  if( argc<5 ){
    fprintf(stderr, "usage: measure RESULT STDOUT STDERR CMD [ARG...] | measure -p PAGES\n");
    return 2;
  }
  fo = open(argv[2], O_WRONLY|O_CREAT|O_TRUNC, 0644);
  fe = open(argv[3], O_WRONLY|O_CREAT|O_TRUNC, 0644);
  if( fo<0 || fe<0 ){ perror("measure: output file"); return 2; }
  t0 = seconds();
  pid = fork();
  if( pid<0 ){ perror("measure: fork"); return 2; }
  if( pid==0 ){
    dup2(fo, 1);
    dup2(fe, 2);
    execvp(argv[4], argv+4);
    perror("measure: exec");
    _exit(127);
  }
  if( wait4(pid, &status, 0, &ru)<0 ){ perror("measure: wait4"); return 2; }
  t1 = seconds();
  f = fopen(argv[1], "w");
  if( f==0 ){ perror("measure: result file"); return 2; }
  fprintf(f, "%.6f %ld %.3f %.3f %ld\n", t1 - t0, ru.ru_maxrss,
          (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec/1e6,
          (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec/1e6, ru.ru_minflt);
  fclose(f);
  if( WIFSIGNALED(status) ) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
