/*
** filestamp.h — what tells whether a file changed while it was read,
** without reading it again (filestamp.c).
*/
#ifndef PROFSUM_FILESTAMP_H
#define PROFSUM_FILESTAMP_H

#include <stdint.h>

/* A regular file's identity and state: device, inode, size, modification
** time.  isFile 0: the path was not a regular file (or could not be
** stat'ed) when the stamp was taken. */
typedef struct ProfsumFileStamp {
  int isFile;
  uint64_t dev, ino;
  int64_t size;
  int64_t mtimeSec, mtimeNsec;
} ProfsumFileStamp;

/* Take the stamp of zPath into *p (isFile 0 when it is not a regular file
** or stat() fails: the caller's reader reports that its own way). */
void profsumFileStampTake(const char *zPath, ProfsumFileStamp *p);

/* 1 when zPath's stamp now is *pBefore (both regular files, the same file,
** size and modification time), else 0 with *pzWhy set (sqlite3_malloc'd;
** NULL when out of memory) to what changed, such as "it grew from 10 to 12
** bytes", "it was modified and kept its size (10 bytes)" or "another file
** took its name".  A stamp taken of something that was not a regular
** file is never said to have changed (returns 1). */
int profsumFileStampSame(const char *zPath, const ProfsumFileStamp *pBefore, char **pzWhy);

#endif
