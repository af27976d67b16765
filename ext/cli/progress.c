/*
** progress.c — the progress line of an import.  While a local file is
** imported and stderr is a terminal, a thread polls the read position of
** the trace (the descriptor that the import opened, found in
** /proc/self/fd, its position from /proc/self/fdinfo/<fd>) and redraws one
** status line; nothing is printed when stderr is not a terminal.
*/
#include "cli.h"

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct Progress {
  int bActive;                /* thread running */
  int bShown;                 /* a line was drawn */
  int bStop;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char zReal[PATH_MAX];       /* realpath of the file read */
  char zName[256];            /* display name (visible, possibly cut short) */
  long long nTotal;           /* file size */
  long long nDone;            /* last position seen */
  double t0;                  /* start time (s) */
  double delay;               /* seconds before the first line */
} Progress;
static Progress g_prog;

/* Seconds on the monotonic clock (for the rate and the ETA). */
static double nowSec(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec*1e-9;
}

/* The largest read position of any descriptor of this process open on
** zReal, from /proc/self/fdinfo; -1 when none is open. */
static long long fdPosition(const char *zReal){
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  long long best = -1;
  if( d==0 ) return -1;
  while( (e = readdir(d))!=0 ){
    char zLink[64], zTarget[PATH_MAX], zInfo[256];
    ssize_t n;
    FILE *f;
    int fd;
    if( e->d_name[0]<'0' || e->d_name[0]>'9' ) continue;
    fd = atoi(e->d_name);
    snprintf(zLink, sizeof(zLink), "/proc/self/fd/%d", fd);
    n = readlink(zLink, zTarget, sizeof(zTarget)-1);
    if( n<=0 ) continue;
    zTarget[n] = 0;
    if( strcmp(zTarget, zReal)!=0 ) continue;
    snprintf(zLink, sizeof(zLink), "/proc/self/fdinfo/%d", fd);
    f = fopen(zLink, "r");
    if( f==0 ) continue;
    while( fgets(zInfo, sizeof(zInfo), f) ){
      long long pos;
      if( sscanf(zInfo, "pos: %lld", &pos)==1 ){ if( pos>best ) best = pos; break; }
    }
    fclose(f);
  }
  closedir(d);
  return best;
}

/* s seconds as "M:SS", or "H:MM:SS" from an hour on, into z (n bytes). */
static void fmtDuration(char *z, size_t n, double s){
  long long t = (long long)(s + 0.5);
  if( t>=3600 ) snprintf(z, n, "%lld:%02lld:%02lld", t/3600, (t/60)%60, t%60);
  else snprintf(z, n, "%lld:%02lld", t/60, t%60);
}

/* Draw the status line (called with g_prog.mu held, from the thread). */
static void progressDraw(void){
  Progress *p = &g_prog;
  double el = nowSec() - p->t0;
  double mb = (double)p->nDone/1e6, tot = (double)p->nTotal/1e6;
  double rate = el>0 ? mb/el : 0;
  char zEta[32] = "--:--";
  char zLine[512];
  if( rate>0 && p->nDone>0 && p->nTotal>=p->nDone ){
    fmtDuration(zEta, sizeof(zEta), (tot-mb)/rate);
  }
  snprintf(zLine, sizeof(zLine), "\rprofsum: importing %s  %.1f/%.1f MB  %3.0f%%  %.1f MB/s  ETA %s\033[K",
           p->zName, mb, tot, p->nTotal>0 ? 100.0*(double)p->nDone/(double)p->nTotal : 0.0, rate, zEta);
  fputs(zLine, stderr);
  fflush(stderr);
  p->bShown = 1;
}

/* The progress thread: every 200 ms, read the position of the file and
** redraw the line once p->delay seconds have passed, until progressStop
** sets bStop. */
static void *progressThread(void *pArg){
  Progress *p = &g_prog;
  (void)pArg;
  pthread_mutex_lock(&p->mu);
  if( p->delay<=0 ) progressDraw();
  while( !p->bStop ){
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 200*1000*1000;
    if( ts.tv_nsec>=1000000000 ){ ts.tv_sec++; ts.tv_nsec -= 1000000000; }
    pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    if( p->bStop ) break;
    {
      long long pos = fdPosition(p->zReal);
      if( pos>p->nDone ) p->nDone = pos;
    }
    if( nowSec() - p->t0 >= p->delay ) progressDraw();
  }
  pthread_mutex_unlock(&p->mu);
  return 0;
}

/* Start the progress line for reading zFile, if stderr is a terminal and
** PROFSUM_NO_PROGRESS does not turn it off (set to any value but "" and
** "0"). */
void progressStart(const char *zFile){
  Progress *p = &g_prog;
  struct stat st;
  const char *z = getenv("PROFSUM_PROGRESS_DELAY_MS");
  const char *zOff = getenv("PROFSUM_NO_PROGRESS");
  memset(p, 0, sizeof(*p));
  if( !isatty(2) || (zOff && zOff[0] && strcmp(zOff, "0")!=0) ) return;
  if( realpath(zFile, p->zReal)==0 || stat(p->zReal, &st)!=0 || !S_ISREG(st.st_mode) ) return;
  p->nTotal = (long long)st.st_size;
  {
    const char *zBase = strrchr(zFile, '/') ? strrchr(zFile, '/')+1 : zFile;
    visibleInto(p->zName, sizeof(p->zName), zBase, strlen(zBase), 0);
  }
  p->delay = z ? atof(z)/1000.0 : 0.5;
  p->t0 = nowSec();
  pthread_mutex_init(&p->mu, 0);
  pthread_cond_init(&p->cv, 0);
  if( pthread_create(&p->thread, 0, progressThread, 0)!=0 ) return;
  p->bActive = 1;
}

/* Stop the thread; returns whether a line is on the screen. */
static int progressStop(void){
  Progress *p = &g_prog;
  if( !p->bActive ) return 0;
  pthread_mutex_lock(&p->mu);
  p->bStop = 1;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, 0);
  p->bActive = 0;
  return p->bShown;
}

/* Stop and erase the line (before an error message). */
void progressAbandon(void){
  if( progressStop() ){
    fputs("\r\033[K", stderr);
    g_prog.bShown = 0;
  }
}

/* Stop and replace the line by the final one. */
void progressFinish(sqlite3_int64 iTrace){
  Progress *p = &g_prog;
  double el;
  char *zEv, *zErr = 0;
  if( !progressStop() ) return;
  el = nowSec() - p->t0;
  zEv = sqlTextTry(&zErr, "SELECT num_events_total FROM main.profsum_trace WHERE trace_id=?1", "i", iTrace);
  fprintf(stderr, "\rprofsum: imported %s  %.1f MB  %s%s%.1f s  %.1f MB/s\033[K\n",
          p->zName, (double)p->nTotal/1e6, zEv ? zEv : "", zEv ? " events  " : "",
          el, el>0 ? (double)p->nTotal/1e6/el : 0.0);
  fflush(stderr);
  free(zEv);
  free(zErr);
  p->bShown = 0;
}
