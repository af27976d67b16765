/*
** filestamp.c — whether a file changed while it was read (filestamp.h).
**
** An import reads its trace more than once: the parser reads it, the
** SHA-256 that identifies it in the history reads it again beside the
** parse (sometimes through a second descriptor), and a few traces are
** parsed twice.  If a writer changes the file meanwhile (a profiler still
** writing it, a copy still arriving, a file replaced by rename), the
** summary, the stored size and the hash could each be of other bytes, and
** a later import of the finished file could be taken for this one.  The
** import stamps the file before its first read and compares after its
** last: a different device or inode (another file under that name), size
** or modification time means it changed.  A change that keeps the size and
** falls within the file system's time resolution (one second on some) is
** not seen; on the usual Linux file systems the time is in nanoseconds.
*/
#include "profsum_int.h"
#include "filestamp.h"

#include <string.h>
#include <sys/stat.h>

/* See filestamp.h. */
void profsumFileStampTake(const char *zPath, ProfsumFileStamp *p){
  struct stat st;
  memset(p, 0, sizeof(*p));
  if( stat(zPath, &st)!=0 || !S_ISREG(st.st_mode) ) return;
  p->isFile = 1;
  p->dev = (uint64_t)st.st_dev;
  p->ino = (uint64_t)st.st_ino;
  p->size = (int64_t)st.st_size;
  p->mtimeSec = (int64_t)st.st_mtim.tv_sec;
  p->mtimeNsec = (int64_t)st.st_mtim.tv_nsec;
}

/* See filestamp.h. */
int profsumFileStampSame(const char *zPath, const ProfsumFileStamp *pBefore, char **pzWhy){
  ProfsumFileStamp now;
  *pzWhy = 0;
  if( !pBefore->isFile ) return 1;
  profsumFileStampTake(zPath, &now);
  if( !now.isFile ){
    *pzWhy = sqlite3_mprintf("it was removed or is no longer a regular file");
  }else if( now.dev!=pBefore->dev || now.ino!=pBefore->ino ){
    *pzWhy = sqlite3_mprintf("another file took its name");
  }else if( now.size!=pBefore->size ){
    *pzWhy = sqlite3_mprintf("it %s from %lld to %lld bytes", now.size>pBefore->size ? "grew" : "shrank",
                             (long long)pBefore->size, (long long)now.size);
  }else if( now.mtimeSec!=pBefore->mtimeSec || now.mtimeNsec!=pBefore->mtimeNsec ){
    *pzWhy = sqlite3_mprintf("it was modified and kept its size (%lld bytes)", (long long)now.size);
  }else{
    return 1;
  }
  return 0;
}
