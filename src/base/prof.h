/* prof.h: wall-time accumulators per training phase, for `make bench`'s profile. Off unless
 * prof_enabled is set; when on, each phase adds its elapsed seconds (a clock read per call,
 * negligible next to the work it brackets). */
#ifndef NMT_PROF_H
#define NMT_PROF_H

enum prof_phase {
    PROF_ENC_FWD, PROF_ENC_BWD, PROF_ATT_FWD, PROF_ATT_BWD, PROF_DEC_FWD, PROF_DEC_BWD,
    PROF_OUT_FWD, PROF_OUT_BWD, PROF_OPTIM, PROF_N
};

extern int prof_enabled;
extern double prof_sec[PROF_N];
double prof_now(void);
const char *prof_name(int phase);

/* PROF_BEGIN(t); ... PROF_END(PHASE, t); */
#define PROF_BEGIN(t) double t = prof_enabled ? prof_now() : 0
#define PROF_END(phase, t) do { if (prof_enabled) prof_sec[phase] += prof_now() - (t); } while (0)

#endif
