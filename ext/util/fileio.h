/*
** fileio.h — writing files whole or not at all (fileio.c): a new file is
** written under a temporary name beside its target, flushed to the disk
** and renamed over the target, so that a reader sees the old file or the
** whole new one, and a failure leaves nothing behind.  Also mkdir -p that
** can take back what it created.
**
** The temporary file: "<target>.tmp-" and 12 random hex digits (the
** target's file name cut to 238 bytes first, so that the name stays
** within 255), created
** with O_CREAT|O_EXCL|O_NOFOLLOW (never an existing name: not a file, not
** a symlink someone planted there; another name is tried then, 100 at
** most) and mode 0666, which the kernel reduces by the umask (and a
** default ACL of the directory) exactly as for any new file.
**
** Symbolic links: the directory of a target is used as named, links in
** its path followed (it is the directory the caller was given); a target
** that is itself a symbolic link (to a file, to a directory, or to
** nothing) is refused, neither followed (which could write outside that
** directory) nor replaced (which would delete the link): see
** profsumFileIsLink().
**
** Conventions: SQLite's allocator only; names returned are freed with
** sqlite3_free().  Nothing keeps state between calls; thread-safe.
*/
#ifndef PROFSUM_FILEIO_H
#define PROFSUM_FILEIO_H

#include "profsum_int.h"

/* What profsumFileWriteTemp() and profsumFileWriteAtomic() return: 0, or
** the step that failed (then *pErrno is its errno, 0 for NOMEM). */
#define PROFSUM_FILE_OK      0
#define PROFSUM_FILE_NOMEM   1   /* out of memory (the temporary name) */
#define PROFSUM_FILE_CREATE  2   /* no temporary file could be created beside the target */
#define PROFSUM_FILE_WRITE   3   /* writing, fsync or close of the temporary file */
#define PROFSUM_FILE_RENAME  4   /* the rename over the target */

/*
** Create a new, empty temporary file beside zPath (see above) for the
** caller to write into, e.g. a stream it produces piece by piece.  Returns
** the descriptor (O_WRONLY, O_CLOEXEC) with *pzTmp its name; or -1 with
** errno set (ENOMEM when the name could not be allocated; EINVAL for a
** target profsumFileSpecial() names, ELOOP for one profsumFileIsLink()
** finds: callers name those first) and *pzTmp 0.
** The caller ends with profsumFileSyncClose() and a rename (or unlink).
*/
int profsumFileTempBeside(const char *zPath, char **pzTmp);

/* What zPath is when it exists and is neither a regular file, a directory
** nor a symlink: "a device", "a pipe" or "a socket"; for a symlink to one
** of those "a link to a device" (pipe, socket), and for a symlink in /dev
** or /proc to anything else "a link to an open file (a descriptor)"
** (/dev/stdout, /proc/self/fd/1 when the output is redirected to a file);
** else 0 (any other symlink: profsumFileIsLink()).  A rename
** over such a name would replace it (as root, /dev/null or /dev/stdout
** itself), so the writers here refuse it: profsumFileTempBeside() and
** profsumFileWriteTemp() fail with errno EINVAL, and callers name it in
** their message first (the CLI writes its output into it in place
** instead; a socket, or a link to one, it refuses). */
const char *profsumFileSpecial(const char *zPath);

/* What the writers say after naming a target profsumFileIsLink() found:
** why nothing is written, and what to do instead. */
#define PROFSUM_FILE_LINK_ADVICE "profsum neither writes through a symbolic link nor " \
  "replaces one: remove the link, or give the path it leads to"

/* 1 when zPath is a symbolic link that profsumFileSpecial() does not name
** (a link to a regular file, to a directory, or to nothing), with *pzWhat
** the phrase for a message, sqlite3_malloc'd (the caller frees it): "a
** symbolic link (to 'T', a file)", "(to 'T', a directory)", "(to 'T',
** which does not exist)"; the writers refuse such a target.  When out of
** memory: 1 with *pzWhat 0, so that the caller refuses (SQLITE_NOMEM).
** 0 (and *pzWhat 0) when zPath is anything else or does not exist. */
int profsumFileIsLink(const char *zPath, char **pzWhat);

/* 1 when replacing zPath would lose a database, with *pzWhat what it is,
** as a phrase for a message (sqlite3_malloc'd; the caller frees it): "the
** database of schema 'S' of this connection" (or its write-ahead log,
** shared-memory index or rollback journal: the same file as the one of an
** attached database of db, by device and inode), "an SQLite database", "an
** SQLite write-ahead log" or "an SQLite rollback journal" (by the file's
** first bytes), or "the ... of the SQLite database 'B'" for a -wal, -shm
** or -journal name beside a database B (another process's; the side file
** need not exist yet).  When out of memory the answer is unknown: 1 with
** *pzWhat 0, so that the caller refuses (SQLITE_NOMEM).  0 (and *pzWhat
** 0) otherwise.  db may be 0. */
int profsumFileIsDatabase(sqlite3 *db, const char *zPath, char **pzWhat);

/* Write all n bytes of z to fd (interrupted writes resumed).  Returns 0,
** or -1 with errno set (EIO for a write that wrote nothing). */
int profsumFileWriteAll(int fd, const void *z, size_t n);

/* fsync fd, then close it (closed in every case).  Returns 0, or -1 with
** errno set to that of the first failure. */
int profsumFileSyncClose(int fd);

/*
** Write n bytes of z to a new temporary file beside zPath, fsync and close
** it, without renaming it: for a caller that renames several files only
** once all are written.  Returns PROFSUM_FILE_OK with *pzTmp the name
** (sqlite3_malloc'd), or the failed step with *pErrno and *pzTmp 0 (the
** temporary file removed; PROFSUM_FILE_CREATE with EINVAL or ELOOP for a
** target that profsumFileSpecial() names or that is a symbolic link).
*/
int profsumFileWriteTemp(const char *zPath, const void *z, size_t n, char **pzTmp, int *pErrno);

/*
** Write n bytes of z to zPath atomically: profsumFileWriteTemp(), then the
** rename over zPath.  The directory must exist (profsumMkdirs()).  Returns
** PROFSUM_FILE_OK, or the failed step with *pErrno; then nothing is left
** behind and zPath is as it was.
*/
int profsumFileWriteAtomic(const char *zPath, const void *z, size_t n, int *pErrno);

/* The directory part of zPath as given: "." when it has no '/', "/" for
** a name in the root.  sqlite3_malloc'd, or 0 when out of memory. */
char *profsumPathDir(const char *zPath);

/* The directories profsumMkdirs() created, to remove them again when the
** write they were made for fails. */
typedef struct ProfsumMadeDirs {
  char *az[64];             /* paths, in creation order (sqlite3_malloc'd) */
  int n;                    /* number used */
} ProfsumMadeDirs;

/*
** mkdir -p zDir: create each missing component of the path as given (mode
** 0777 less the umask), recording what was created in *pM (zeroed by the
** caller before the first call; the first 64 are recorded).  Returns
** SQLITE_OK; SQLITE_CANTOPEN with *pzErr "'x': not a directory" (a
** component exists and is not a directory), "cannot create directory 'x':
** <strerror>" or "'x': <strerror>"; or SQLITE_NOMEM.  What was created
** before an error stays in *pM.
*/
int profsumMkdirs(const char *zDir, ProfsumMadeDirs *pM, char **pzErr);

/* Remove the directories of *pM (deepest first; each only if still
** empty) and forget them. */
void profsumMadeDirsUndo(ProfsumMadeDirs *pM);

/* Forget the directories of *pM, keeping them on disk. */
void profsumMadeDirsKeep(ProfsumMadeDirs *pM);

#endif /* PROFSUM_FILEIO_H */
