/*
** tests/oom_sql.c — out of memory at every allocation of the SQL calls
** given as arguments (each must give one row of one column): each is run
** once for reference, then again with its 1st, 2nd, ... allocation made to
** fail.  Each run must end in an error or give the reference result byte
** for byte.  Built with AddressSanitizer + UBSan like tests/oom_test.c, so
** a leak or a use after free on an error path fails too.  Used by
** tests/test_xplane_rows.py (the XPlane rows, diagnostics and trim) when
** build/asan/oom_sql exists:
**
**   make build/asan/oom_sql   (built and used by make asan)
**   build/asan/oom_sql [-s STRIDE] SQL...
**
** Prints a line per call, then "N passed, N failed"; exit 1 on any failure.
*/
#include "oom_common.h"

int main(int argc, char **argv){
  sqlite3 *db = 0;
  long stride = 1;
  int i = 1, nPass = 0, nFail = 0;
  if( argc>2 && strcmp(argv[1], "-s")==0 ){ stride = atol(argv[2]); i = 3; }
  if( i>=argc || stride<1 ){
    fprintf(stderr, "usage: oom_sql [-s STRIDE] SQL...\n");
    return 2;
  }
  if( oomOpen("oom_sql", &db) ) return 2;
  for(; i<argc; i++){
    if( oomCheckCall(db, argv[i], stride) ) nPass++; else nFail++;
  }
  return oomFinish(db, nPass, nFail);
}
