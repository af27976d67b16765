/*
** measure.c — run one command and measure it, for bench/run.sh.
**
**   measure RESULT STDOUT STDERR CMD [ARG...]
**
** Forks, runs CMD with stdout and stderr sent to the files given, waits for
** it with wait4(), and writes one line to RESULT:
**
**   <wall seconds> <peak RSS KB> <user CPU s> <system CPU s>
**
** The wall time is read (CLOCK_MONOTONIC) right before the fork and right
** after the wait: the command and the cost of starting it, not the cost of
** starting a timer (GNU time, started by the shell between two clock reads,
** added about 2.5 ms to every run: a third of a 10 MB scan).  Peak RSS and
** CPU times are the kernel's rusage of the command and all its threads, as
** /usr/bin/time reports them; this program is small, so the RSS of the
** forked child before its exec (which the kernel counts) is about 1 MB, as
** under GNU time (a fork from Python would count Python's 9 MB).
** Exit status: the command's (128 + signal when it was killed), 127 when it
** could not be started, 2 on a usage error.
*/
#define _GNU_SOURCE
#include <fcntl.h>
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

int main(int argc, char **argv){
  int fo, fe, status = 0;
  double t0, t1;
  pid_t pid;
  struct rusage ru;
  FILE *f;
  if( argc<5 ){
    fprintf(stderr, "usage: measure RESULT STDOUT STDERR CMD [ARG...]\n");
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
  fprintf(f, "%.6f %ld %.3f %.3f\n", t1 - t0, ru.ru_maxrss,
          (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec/1e6,
          (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec/1e6);
  fclose(f);
  if( WIFSIGNALED(status) ) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
