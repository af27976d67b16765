/*
** engine_wall.c — stage A's step wall time: for every device and step,
** each instant of the step counted once as collective, transfer, compute
** or idle.
**
** Not written yet: writes nothing.
*/
#include "profsum_int.h"
#include "engine_int.h"

/* See engine_int.h. */
int profsumEngWall(Engine *e){
  (void)e;
  return SQLITE_OK;
}
