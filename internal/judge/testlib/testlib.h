/*
 * testlib.h — AlgoItny's testlib-compatible header for checkers and
 * interactors.
 *
 * This is NOT Mike Mirzayanov's testlib (https://github.com/MikeMirzayanov/testlib);
 * it is an independent implementation of the part of its interface that
 * checkers and interactors use, so that a Polygon checker compiles as is:
 * registerTestlibCmd, registerInteraction, the streams inf/ouf/ans with
 * their read functions, quitf/quitp/quit/quitif, ensuref, expectedButFound,
 * the outcomes _ok/_wa/_pe/_fail/_points and testlib's exit codes (0, 1, 2,
 * 3, 7) and messages ("ok …", "wrong answer …", "points 0.5 …" on stderr).
 * Generators (rnd) and validators (registerValidation) are not provided.
 * Part of AlgoItny, under the project's license.
 */
#ifndef _TESTLIB_H_
#define _TESTLIB_H_

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#define VERSION "algoitny-testlib-compat-1"

enum TResult { _ok = 0, _wa = 1, _pe = 2, _fail = 3, _dirt = 4, _points = 5, _unexpected_eof = 8, _partially = 16 };

#ifndef OK_EXIT_CODE
#define OK_EXIT_CODE 0
#endif
#ifndef WA_EXIT_CODE
#define WA_EXIT_CODE 1
#endif
#ifndef PE_EXIT_CODE
#define PE_EXIT_CODE 2
#endif
#ifndef FAIL_EXIT_CODE
#define FAIL_EXIT_CODE 3
#endif
#ifndef POINTS_EXIT_CODE
#define POINTS_EXIT_CODE 7
#endif

#define NORETURN __attribute__((noreturn))

static std::string __tl_vformat(const char *fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    int n = std::vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) return std::string();
    std::vector<char> buf(n + 1);
    std::vsnprintf(&buf[0], buf.size(), fmt, ap);
    return std::string(&buf[0], n);
}

__attribute__((format(printf, 1, 2))) inline std::string format(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string s = __tl_vformat(fmt, ap);
    va_end(ap);
    return s;
}

inline std::string upperCase(std::string s) {
    for (size_t i = 0; i < s.size(); i++) s[i] = (char) std::toupper((unsigned char) s[i]);
    return s;
}

inline std::string lowerCase(std::string s) {
    for (size_t i = 0; i < s.size(); i++) s[i] = (char) std::tolower((unsigned char) s[i]);
    return s;
}

inline std::string englishEnding(int x) {
    x %= 100;
    if (x / 10 == 1) return "th";
    if (x % 10 == 1) return "st";
    if (x % 10 == 2) return "nd";
    if (x % 10 == 3) return "rd";
    return "th";
}

template <typename T> std::string vtos(const T &t) {
    std::ostringstream ss;
    ss << t;
    return ss.str();
}

template <typename T> std::string toString(const T &t) { return vtos(t); }

/* __tl_points renders points as testlib does: %.10f without trailing zeroes. */
inline std::string __tl_points(double p) {
    std::string s = format("%.10f", p);
    while (!s.empty() && s[s.size() - 1] == '0') s.erase(s.size() - 1);
    return s + "0";
}

inline bool doubleCompare(double expected, double result, double maxError) {
    if (std::isnan(expected)) return std::isnan(result);
    if (std::isinf(expected)) return expected == result;
    if (std::isnan(result) || std::isinf(result)) return false;
    if (std::fabs(result - expected) <= maxError + 1E-15) return true;
    double lo = std::min(expected * (1.0 - maxError), expected * (1.0 + maxError));
    double hi = std::max(expected * (1.0 - maxError), expected * (1.0 + maxError));
    return result + 1E-15 >= lo && result <= hi + 1E-15;
}

inline double doubleDelta(double expected, double result) {
    double absolute = std::fabs(result - expected);
    if (std::fabs(expected) > 1E-9) return std::min(absolute, absolute / std::fabs(expected));
    return absolute;
}

static std::string __tl_checker_name;
inline void setName(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    __tl_checker_name = __tl_vformat(fmt, ap);
    va_end(ap);
}

NORETURN inline void __tl_quit(TResult r, const std::string &msg, double points = 0) {
    std::string m = msg.size() > 4096 ? msg.substr(0, 4096) + "..." : msg;
    int code = FAIL_EXIT_CODE;
    const char *head = "FAIL ";
    switch (r) {
    case _ok: code = OK_EXIT_CODE; head = "ok "; break;
    case _wa: code = WA_EXIT_CODE; head = "wrong answer "; break;
    case _pe: case _dirt: code = PE_EXIT_CODE; head = "wrong output format "; break;
    case _unexpected_eof: code = PE_EXIT_CODE; head = "unexpected eof "; break;
    case _points: code = POINTS_EXIT_CODE; head = "points "; m = __tl_points(points) + (m.empty() ? "" : " " + m); break;
    default: break;
    }
    std::fflush(stdout);
    std::fprintf(stderr, "%s%s\n", head, m.c_str());
    std::exit(code);
}

struct InStream {
    FILE *f;
    TResult readError; /* what a malformed stream means: _pe for ouf, _fail else */
    std::string name;
    bool stdinStream;

    InStream() : f(NULL), readError(_fail), stdinStream(false) {}

    void init(FILE *file, TResult err, const std::string &n) { f = file; readError = err; name = n; }

    NORETURN void quit(TResult r, const char *msg) { __tl_quit(r, msg); }

    NORETURN __attribute__((format(printf, 3, 4))) void quitf(TResult r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        std::string s = __tl_vformat(fmt, ap);
        va_end(ap);
        __tl_quit(r, s);
    }

    __attribute__((format(printf, 4, 5))) void quitif(bool cond, TResult r, const char *fmt, ...) {
        if (!cond) return;
        va_list ap;
        va_start(ap, fmt);
        std::string s = __tl_vformat(fmt, ap);
        va_end(ap);
        __tl_quit(r, s);
    }

    __attribute__((format(printf, 3, 4))) void ensuref(bool cond, const char *fmt, ...) {
        if (cond) return;
        va_list ap;
        va_start(ap, fmt);
        std::string s = __tl_vformat(fmt, ap);
        va_end(ap);
        __tl_quit(readError == _pe ? _wa : _fail, s);
    }
    void ensure(bool cond, const std::string &msg = "") { if (!cond) __tl_quit(readError == _pe ? _wa : _fail, msg); }

    int peek() { int c = std::getc(f); if (c != EOF) std::ungetc(c, f); return c; }
    int readRawChar() { return std::getc(f); }
    void skipBlanks() { int c; while ((c = peek()) != EOF && std::isspace(c)) std::getc(f); }

    bool eof() { return peek() == EOF; }
    bool seekEof() { skipBlanks(); return eof(); }
    bool eoln() { int c = peek(); return c == '\n' || c == '\r' || c == EOF; }
    bool seekEoln() {
        int c;
        while ((c = peek()) == ' ' || c == '\t') std::getc(f);
        return eoln();
    }
    void nextLine() { int c; while ((c = std::getc(f)) != EOF && c != '\n') {} }

    std::string readToken() {
        skipBlanks();
        std::string s;
        int c;
        while ((c = peek()) != EOF && !std::isspace(c)) s += (char) std::getc(f);
        if (s.empty()) __tl_quit(readError, name + ": unexpected end of file, expected a token");
        return s;
    }
    std::string readWord() { return readToken(); }
    std::string readToken(const std::string &, const std::string & = "") { return readToken(); }
    std::string readWord(const std::string &, const std::string & = "") { return readToken(); }

    char readChar() {
        int c = std::getc(f);
        if (c == EOF) __tl_quit(readError, name + ": unexpected end of file, expected a character");
        return (char) c;
    }
    char readChar(char want) {
        char c = readChar();
        if (c != want) __tl_quit(readError, name + format(": expected %d, found %d", (int) want, (int) c));
        return c;
    }
    char readSpace() { return readChar(' '); }
    void readEoln() {
        int c = std::getc(f);
        if (c == '\r') c = std::getc(f);
        if (c != '\n') __tl_quit(readError, name + ": expected end of line");
    }
    void readEof() {
        if (!seekEof()) __tl_quit(readError == _pe ? _pe : _fail, name + ": expected end of file");
    }

    std::string readLine() {
        std::string s;
        int c;
        if (peek() == EOF) __tl_quit(readError, name + ": unexpected end of file, expected a line");
        while ((c = std::getc(f)) != EOF && c != '\n') s += (char) c;
        if (!s.empty() && s[s.size() - 1] == '\r') s.erase(s.size() - 1);
        return s;
    }
    std::string readString() { return readLine(); }
    std::string readLine(const std::string &, const std::string & = "") { return readLine(); }
    std::string readString(const std::string &, const std::string & = "") { return readLine(); }

    long long readLong() {
        std::string t = readToken();
        char *end = NULL;
        errno = 0;
        long long v = std::strtoll(t.c_str(), &end, 10);
        if (t.empty() || *end != 0 || errno != 0) __tl_quit(readError, name + ": expected an integer, found \"" + t + "\"");
        return v;
    }
    long long readLong(long long lo, long long hi, const std::string &what = "") {
        long long v = readLong();
        if (v < lo || v > hi)
            __tl_quit(readError == _pe ? _wa : _fail, format("%s %lld violates the range [%lld, %lld]",
                                                             (what.empty() ? "integer" : what.c_str()), v, lo, hi));
        return v;
    }
    int readInt() {
        long long v = readLong();
        if (v < INT_MIN || v > INT_MAX) __tl_quit(readError, name + ": integer out of 32-bit range");
        return (int) v;
    }
    int readInt(int lo, int hi, const std::string &what = "") { return (int) readLong(lo, hi, what); }
    int readInteger() { return readInt(); }
    int readInteger(int lo, int hi, const std::string &what = "") { return readInt(lo, hi, what); }
    unsigned long long readUnsignedLong() {
        std::string t = readToken();
        char *end = NULL;
        errno = 0;
        unsigned long long v = std::strtoull(t.c_str(), &end, 10);
        if (t.empty() || t[0] == '-' || *end != 0 || errno != 0) __tl_quit(readError, name + ": expected an unsigned integer, found \"" + t + "\"");
        return v;
    }

    double readDouble() {
        std::string t = readToken();
        char *end = NULL;
        double v = std::strtod(t.c_str(), &end);
        if (t.empty() || *end != 0) __tl_quit(readError, name + ": expected a real number, found \"" + t + "\"");
        return v;
    }
    double readDouble(double lo, double hi, const std::string &what = "") {
        double v = readDouble();
        if (v < lo || v > hi)
            __tl_quit(readError == _pe ? _wa : _fail, format("%s %g violates the range [%g, %g]",
                                                             (what.empty() ? "real" : what.c_str()), v, lo, hi));
        return v;
    }
    double readReal() { return readDouble(); }
    double readReal(double lo, double hi, const std::string &what = "") { return readDouble(lo, hi, what); }
    double readStrictDouble(double lo, double hi, int, int, const std::string &what = "") { return readDouble(lo, hi, what); }
    double readStrictReal(double lo, double hi, int, int, const std::string &what = "") { return readDouble(lo, hi, what); }

    std::vector<int> readInts(int n, int lo, int hi, const std::string &what = "") {
        std::vector<int> v(n);
        for (int i = 0; i < n; i++) v[i] = readInt(lo, hi, what);
        return v;
    }
    std::vector<long long> readLongs(int n, long long lo, long long hi, const std::string &what = "") {
        std::vector<long long> v(n);
        for (int i = 0; i < n; i++) v[i] = readLong(lo, hi, what);
        return v;
    }
    std::vector<std::string> readTokens(int n) {
        std::vector<std::string> v(n);
        for (int i = 0; i < n; i++) v[i] = readToken();
        return v;
    }
    std::vector<std::string> readWords(int n) { return readTokens(n); }

    void close() {
        if (f != NULL && !stdinStream) std::fclose(f);
        f = NULL;
    }
};

static InStream inf, ouf, ans;
static std::ofstream tout; /* interactors: the output file (argv[2]), as in testlib; opened by registerInteraction */

NORETURN inline void quit(TResult r, const std::string &msg) { __tl_quit(r, msg); }
NORETURN inline void quit(TResult r, const char *msg) { __tl_quit(r, msg); }

NORETURN __attribute__((format(printf, 2, 3))) inline void quitf(TResult r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string s = __tl_vformat(fmt, ap);
    va_end(ap);
    __tl_quit(r, s);
}

__attribute__((format(printf, 3, 4))) inline void quitif(bool cond, TResult r, const char *fmt, ...) {
    if (!cond) return;
    va_list ap;
    va_start(ap, fmt);
    std::string s = __tl_vformat(fmt, ap);
    va_end(ap);
    __tl_quit(r, s);
}

/* quitp ends with partial credit: "points <p> <message>" on stderr, exit 7. */
NORETURN inline void quitp(double points, const std::string &msg = "") { __tl_quit(_points, msg, points); }
NORETURN inline void quitp(int points, const std::string &msg = "") { __tl_quit(_points, msg, points); }
NORETURN __attribute__((format(printf, 2, 3))) inline void quitp(double points, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string s = __tl_vformat(fmt, ap);
    va_end(ap);
    __tl_quit(_points, s, points);
}

__attribute__((format(printf, 2, 3))) inline void ensuref(bool cond, const char *fmt, ...) {
    if (cond) return;
    va_list ap;
    va_start(ap, fmt);
    std::string s = __tl_vformat(fmt, ap);
    va_end(ap);
    __tl_quit(_fail, s);
}
#define ensure(cond) ensuref((cond), "%s", "condition failed: " #cond)

template <typename T> NORETURN void expectedButFound(TResult r, T expected, T found, const char *prepend = NULL) {
    std::string m = "expected '" + vtos(expected) + "', but found '" + vtos(found) + "'";
    __tl_quit(r, prepend != NULL && *prepend ? std::string(prepend) + ": " + m : m);
}

inline void __tl_open(InStream &s, const char *path, TResult err, const std::string &name) {
    FILE *f = std::fopen(path, "rb");
    if (f == NULL) __tl_quit(_fail, std::string("cannot open ") + name + " " + path);
    s.init(f, err, name);
}

/* registerTestlibCmd: checker input output answer [result-file] (the result
 * file is ignored: the message goes to stderr). */
inline void registerTestlibCmd(int argc, char *argv[]) {
    if (argc < 4) __tl_quit(_fail, "usage: checker <input> <output> <answer>");
    __tl_open(inf, argv[1], _fail, "input");
    __tl_open(ouf, argv[2], _pe, "output");
    __tl_open(ans, argv[3], _fail, "answer");
}
inline void registerTestlibCmd(int argc, const char *argv[]) { registerTestlibCmd(argc, (char **) argv); }

/* registerInteraction: interactor input [output [answer]]; the program's
 * output is read from stdin (ouf), the interactor writes to it on stdout,
 * and tout writes the output file (argv[2]). */
inline void registerInteraction(int argc, char *argv[]) {
    if (argc < 2) __tl_quit(_fail, "usage: interactor <input> [<output> [<answer>]]");
    __tl_open(inf, argv[1], _fail, "input");
    ouf.init(stdin, _pe, "output");
    ouf.stdinStream = true;
    if (argc > 2) tout.open(argv[2]);
    if (argc > 3) __tl_open(ans, argv[3], _fail, "answer");
}
inline void registerInteraction(int argc, const char *argv[]) { registerInteraction(argc, (char **) argv); }

#endif
