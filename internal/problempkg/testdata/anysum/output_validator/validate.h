// Helpers of the output validator: the ICPC exit codes and messages.
#pragma once
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

static std::string feedback_dir;

[[noreturn]] inline void verdict(int code, const char *fmt, ...) {
    std::string path = feedback_dir + "judgemessage.txt";
    FILE *f = fopen(path.c_str(), "w");
    if (f) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fclose(f);
    }
    exit(code);
}
#define accept() verdict(42, "ok")
#define wrong(...) verdict(43, __VA_ARGS__)
