// The header's own sink, brought as a user's sink: the control beside
// stderr_under_lock.cpp.
#include "logjam/logjam.hpp"

logjam::Sink *logjam_make_sink() { return new logjam::Logjam(); }
