/*
** rowbuf.h — rows for one table gathered in memory and inserted in batches
** by one INSERT ... SELECT over a virtual table that reads them
** (profsum_rowsrc), instead of binding and stepping an INSERT per row.
**
** Binding costs: each sqlite3_bind_* takes the connection's mutex, and
** every row steps and resets a statement.  For tens of thousands of rows
** (a capture's step spans, step wall times and per-step utilization) that
** is about half of the insert's time; the virtual table hands SQLite the
** values with sqlite3_result_* calls inside one statement instead.  The
** rows reach the table in the order they were added, with the values and
** types they would have been bound with.
**
** Use: profsumRowBufInit (the table and its columns), then per row one
** setter per column in order (profsumRowBufInt, ...Double, ...TextStatic,
** ...Text, ...Null) and profsumRowBufEnd; profsumRowBufFlush at the end, then
** profsumRowBufFree (on every path).  An error of SQLite comes back from
** profsumRowBufEnd or profsumRowBufFlush with its message in the
** connection (sqlite3_errmsg), as a failed step of an INSERT would.
*/
#ifndef PROFSUM_ROWBUF_H
#define PROFSUM_ROWBUF_H

#include "profsum_int.h"

#define PROFSUM_ROWBUF_MAXCOL 16     /* columns of a row at most */

/* One value of a row. */
typedef struct ProfsumCell {
  int eType;                 /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_NULL,
                             ** or PROFSUM_CELL_COPY (text in the buffer's own bytes) */
  int n;                     /* text: bytes */
  union { sqlite3_int64 i; double r; const char *z; } u;   /* a copy: u.i is its offset */
} ProfsumCell;
#define PROFSUM_CELL_COPY 100

/* Rows waiting for their insert. */
typedef struct ProfsumRowBuf {
  sqlite3_stmt *pIns;        /* INSERT INTO ... SELECT ... FROM profsum_rowsrc(?1) */
  int nCol;
  int iCol;                  /* the next column of the row being added */
  ProfsumCell *aCell;        /* a batch of rows of nCol cells */
  int nRow;
  char *aText;               /* the batch's copied texts (profsumRowBufText) */
  sqlite3_int64 nText, nTextAlloc;
  int oom;                   /* a copy failed: profsumRowBufEnd says SQLITE_NOMEM */
} ProfsumRowBuf;

/* Set up b for INSERT INTO "zSchema".zTable(zCols) of nCol columns (1 to
** PROFSUM_ROWBUF_MAXCOL), zCols the column list without parentheses.
** SQLITE_OK, SQLITE_NOMEM or the error of preparing it (its message in
** db).  b is set so that profsumRowBufFree may be called even on an
** error. */
int profsumRowBufInit(ProfsumRowBuf *b, sqlite3 *db, const char *zSchema, const char *zTable,
                      const char *zCols, int nCol);
/* The next column of the row being added. */
void profsumRowBufInt(ProfsumRowBuf *b, sqlite3_int64 v);
void profsumRowBufDouble(ProfsumRowBuf *b, double v);
void profsumRowBufNull(ProfsumRowBuf *b);
/* Text z[0..n) (n < 0: up to its NUL) that stays where it is until the
** rows are flushed (a pooled string, a literal). */
void profsumRowBufTextStatic(ProfsumRowBuf *b, const char *z, int n);
/* Text z[0..n) (n < 0: up to its NUL) copied into the buffer: z may change or go
** once this returns.  A failed copy is reported by profsumRowBufEnd. */
void profsumRowBufText(ProfsumRowBuf *b, const char *z, int n);
/* The row is complete (every column set): inserts the rows gathered when
** the buffer is full.  SQLITE_OK, or SQLITE_NOMEM, or the insert's error. */
int profsumRowBufEnd(ProfsumRowBuf *b);
/* Insert the rows gathered.  SQLITE_OK or the insert's error. */
int profsumRowBufFlush(ProfsumRowBuf *b);
/* Free what b holds (the rows not flushed are dropped). */
void profsumRowBufFree(ProfsumRowBuf *b);

/* Register the virtual table profsum_rowsrc on db.  SQLITE_OK or an error. */
int profsumRegisterRowSrc(sqlite3 *db);

#endif /* PROFSUM_ROWBUF_H */
