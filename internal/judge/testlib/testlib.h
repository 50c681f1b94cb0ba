/*
 * testlib.h — AlgoItny's testlib-compatible header.
 *
 * This is NOT Mike Mirzayanov's testlib (https://github.com/MikeMirzayanov/testlib);
 * it is an independent implementation of its documented interface, written
 * for AlgoItny, so that the checkers, validators, generators and interactors
 * problem setters write for Polygon compile as they are and behave as they
 * do with testlib:
 *
 *   - checkers:    registerTestlibCmd(argc, argv): input output answer
 *                  [result-file [-appes]], streams inf/ouf/ans;
 *   - interactors: registerInteraction(argc, argv): input output [answer
 *                  [result-file]], the contestant on ouf (stdin) and stdout,
 *                  tout for the output file;
 *   - validators:  registerValidation(argc, argv): strict reading of stdin,
 *                  named ranged reads, validator.testset()/group(),
 *                  --testOverviewLogFileName;
 *   - generators:  registerGen(argc, argv, version): rnd seeded from the
 *                  command line, giving testlib's sequence for the same
 *                  arguments; opt<T>(), println, shuffle, startTest.
 *
 * Outcomes and exit codes: _ok 0, _wa 1, _pe 2, _fail 3, _dirt 4 (reported
 * as a presentation error, exit 2), _points 7, _unexpected_eof 8 (2 unless
 * ENABLE_UNEXPECTED_EOF is defined). A checker that accepts (_ok, _points)
 * while the contestant's output has more tokens ends with a presentation
 * error: "Extra information in the output file".
 *
 * Part of AlgoItny, under the project's license.
 */
#ifndef _TESTLIB_H_
#define _TESTLIB_H_

#define VERSION "0.9.45-algoitny"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#define random __random_deprecated
#include <stdlib.h>
#undef random

#ifndef LLONG_MIN
#define LLONG_MIN (-9223372036854775807LL - 1)
#endif

#define LF ((char) 10)
#define CR ((char) 13)
#define TAB ((char) 9)
#define SPACE ((char) ' ')
#define EOFC (255)

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
#ifndef DIRT_EXIT_CODE
#define DIRT_EXIT_CODE 4
#endif
#ifndef POINTS_EXIT_CODE
#define POINTS_EXIT_CODE 7
#endif
#ifndef UNEXPECTED_EOF_EXIT_CODE
#define UNEXPECTED_EOF_EXIT_CODE 8
#endif
#ifndef PC_BASE_EXIT_CODE
#define PC_BASE_EXIT_CODE 0
#endif

#define I64 "%lld"
#define U64 "%llu"

#ifdef __GNUC__
#define NORETURN __attribute__((noreturn))
#define __TL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NORETURN
#define __TL_PRINTF(a, b)
#endif

/* ------------------------------------------------------------------------
 * Outcomes and modes
 * ---------------------------------------------------------------------- */

enum TMode { _input, _output, _answer };

enum TResult {
    _ok = 0,
    _wa = 1,
    _pe = 2,
    _fail = 3,
    _dirt = 4,
    _points = 5,
    _unexpected_eof = 8,
    _partially = 16
};

enum TTestlibMode { _unknown, _checker, _validator, _generator, _interactor, _scorer };

#define _pc(exitCode) (TResult(_partially + (exitCode)))

const long long __TESTLIB_LONGLONG_MAX = 9223372036854775807LL;
const int __TESTLIB_MAX_TEST_CASE = 1073741823;

int __testlib_exitCode;
bool __testlib_hasTestCase;
int __testlib_testCase = -1;

NORETURN static void __testlib_fail(const std::string &message);

/* ------------------------------------------------------------------------
 * Strings and numbers
 * ---------------------------------------------------------------------- */

static std::string __tl_vformat(const char *fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    int n = std::vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n <= 0)
        return std::string();
    std::vector<char> buf(size_t(n) + 1);
    std::vsnprintf(&buf[0], buf.size(), fmt, ap);
    return std::string(&buf[0], size_t(n));
}

#define __TL_FORMAT(last, fmt, out)          \
    std::string out;                         \
    {                                        \
        va_list __tl_ap;                     \
        va_start(__tl_ap, last);             \
        out = __tl_vformat((fmt), __tl_ap);  \
        va_end(__tl_ap);                     \
    }

#if defined(__has_include) && __cplusplus >= 202002L
#if __has_include(<format>)
#define __TL_TEMPLATE_FORMAT
#endif
#endif

#ifdef __TL_TEMPLATE_FORMAT
/* Templates, so that format("%d", x) is not std::format's under "using
   namespace std" in C++20. */
template <typename... Args>
std::string format(const char *fmt, Args &&...args) {
    int n = std::snprintf(NULL, 0, fmt, args...);
    if (n <= 0)
        return std::string();
    std::vector<char> buf(size_t(n) + 1);
    std::snprintf(&buf[0], buf.size(), fmt, args...);
    return std::string(&buf[0], size_t(n));
}

template <typename... Args>
std::string format(const std::string &fmt, Args &&...args) {
    return format(fmt.c_str(), std::forward<Args>(args)...);
}
#else
__TL_PRINTF(1, 2) std::string format(const char *fmt, ...) {
    __TL_FORMAT(fmt, fmt, result);
    return result;
}

std::string format(const std::string fmt, ...) {
    __TL_FORMAT(fmt, fmt.c_str(), result);
    return result;
}
#endif

__TL_PRINTF(1, 2) std::string testlib_format_(const char *fmt, ...) {
    __TL_FORMAT(fmt, fmt, result);
    return result;
}

template <typename T>
static inline T __testlib_abs(const T &x) { return x > 0 ? x : -x; }

template <typename T>
static inline T __testlib_min(const T &a, const T &b) { return a < b ? a : b; }

template <typename T>
static inline T __testlib_max(const T &a, const T &b) { return a > b ? a : b; }

/* Into [a, b): testlib's crop never returns b itself. */
template <typename T>
static inline T __testlib_crop(T value, T a, T b) { return __testlib_min(__testlib_max(value, a), --b); }

static inline double __testlib_crop(double value, double a, double b) {
    value = __testlib_min(__testlib_max(value, a), b);
    if (value >= b)
        value = std::nexttoward(b, a);
    return value;
}

static bool __testlib_isNaN(double r) {
    volatile double v = r;
    return v != v;
}

static double __testlib_nan() { return std::numeric_limits<double>::quiet_NaN(); }

/* Anything beyond 1E300 counts as infinite, as testlib has it. */
static bool __testlib_isInfinite(double r) {
    volatile double v = r;
    return v > 1E300 || v < -1E300;
}

/* Integers in decimal digits; everything else through a stream, first word. */
template <typename T>
static std::string __tl_vtos(const T &t, std::true_type) {
    if (t == 0)
        return "0";
    T n(t);
    bool negative = n < 0;
    std::string digits;
    while (n != 0) {
        T d = n % 10;
        if (d < 0)
            d = -d;
        digits += char('0' + d);
        n /= 10;
    }
    if (negative)
        digits += '-';
    std::reverse(digits.begin(), digits.end());
    return digits;
}

template <typename T>
static std::string __tl_vtos(const T &t, std::false_type) {
    std::ostringstream out;
    out << t;
    std::istringstream in(out.str());
    std::string first;
    in >> first;
    return first;
}

template <typename T>
static std::string vtos(const T &t) {
    return __tl_vtos(t, std::integral_constant<bool, std::is_integral<T>::value>());
}

template <typename T>
static std::string toString(const T &t) { return vtos(t); }

/* 1000000000 reads 10^9 in messages, 2000000000 reads 2*10^9. */
template <typename T>
static std::string toHumanReadableString(const T &n) {
    if (n == 0)
        return vtos(n);
    T m = n;
    int zeros = 0;
    while (m % 10 == 0)
        m /= 10, zeros++;
    if (zeros < 7)
        return vtos(n);
    if (m == 1)
        return "10^" + vtos(zeros);
    if (!std::is_unsigned<T>::value && m == T(-1))
        return "-10^" + vtos(zeros);
    return vtos(m) + "*10^" + vtos(zeros);
}

static std::string removeDoubleTrailingZeroes(std::string value) {
    if (value.find('.') != std::string::npos)
        while (!value.empty() && value[value.size() - 1] == '0')
            value.erase(value.size() - 1);
    if (!value.empty() && value[value.size() - 1] == '.')
        value += '0';
    return value;
}

inline std::string upperCase(std::string s) {
    for (size_t i = 0; i < s.size(); i++)
        if (s[i] >= 'a' && s[i] <= 'z')
            s[i] = char(s[i] - 'a' + 'A');
    return s;
}

inline std::string lowerCase(std::string s) {
    for (size_t i = 0; i < s.size(); i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            s[i] = char(s[i] - 'A' + 'a');
    return s;
}

template <typename C>
inline bool isEof(C c) { return c == EOFC; }

template <typename C>
inline bool isEoln(C c) { return c == LF || c == CR; }

template <typename C>
inline bool isBlanks(C c) { return c == LF || c == CR || c == SPACE || c == TAB; }

inline std::string trim(const std::string &s) {
    size_t l = 0, r = s.size();
    while (l < r && isBlanks(s[l]))
        l++;
    while (r > l && isBlanks(s[r - 1]))
        r--;
    return s.substr(l, r - l);
}

/* A token as messages show it: NULs as '~', at most 64 characters. */
static std::string __testlib_part(const std::string &s) {
    std::string t(s);
    std::replace(t.begin(), t.end(), '\0', '~');
    if (t.size() <= 64)
        return t;
    return t.substr(0, 30) + "..." + t.substr(t.size() - 31);
}

inline std::string compress(const std::string &s) { return __testlib_part(s); }

inline std::string englishEnding(int x) {
    x %= 100;
    if (x / 10 == 1)
        return "th";
    switch (x % 10) {
    case 1: return "st";
    case 2: return "nd";
    case 3: return "rd";
    }
    return "th";
}

/* Whether s is exactly the decimal form of integer (no '+', no zeros in front). */
static inline bool equals(long long integer, const char *s) {
    return std::strcmp(s, __tl_vtos(integer, std::true_type()).c_str()) == 0;
}

static inline bool equals(unsigned long long integer, const char *s) {
    return std::strcmp(s, __tl_vtos(integer, std::true_type()).c_str()) == 0;
}

inline bool doubleCompare(double expected, double result, double MAX_DOUBLE_ERROR) {
    double eps = MAX_DOUBLE_ERROR + 1E-15;
    if (__testlib_isNaN(expected))
        return __testlib_isNaN(result);
    if (__testlib_isInfinite(expected))
        return __testlib_isInfinite(result) && (expected > 0) == (result > 0);
    if (__testlib_isNaN(result) || __testlib_isInfinite(result))
        return false;
    if (__testlib_abs(result - expected) <= eps)
        return true;
    double a = expected * (1.0 - eps), b = expected * (1.0 + eps);
    return result >= __testlib_min(a, b) && result <= __testlib_max(a, b);
}

inline double doubleDelta(double expected, double result) {
    double absolute = __testlib_abs(result - expected);
    if (__testlib_abs(expected) > 1E-9)
        return __testlib_min(absolute, __testlib_abs(absolute / expected));
    return absolute;
}

template <typename It, typename Sep>
std::string join(It first, It last, Sep separator) {
    std::ostringstream out;
    for (It i = first; i != last; ++i) {
        if (i != first)
            out << separator;
        out << *i;
    }
    return out.str();
}

template <typename It>
std::string join(It first, It last) { return join(first, last, ' '); }

template <typename C, typename Sep>
std::string join(const C &c, Sep separator) { return join(c.begin(), c.end(), separator); }

template <typename C>
std::string join(const C &c) { return join(c, ' '); }

static std::vector<std::string> __tl_split(const std::string &s, const std::string &seps, bool keepEmpty) {
    std::vector<std::string> parts;
    if (seps.empty())
        return std::vector<std::string>(1, s);
    std::string cur;
    for (size_t i = 0; i < s.size(); i++) {
        if (seps.find(s[i]) != std::string::npos) {
            if (keepEmpty || !cur.empty())
                parts.push_back(cur);
            cur.clear();
        } else
            cur += s[i];
    }
    if (keepEmpty || !cur.empty())
        parts.push_back(cur);
    return parts;
}

/* k separators give exactly k+1 items. */
std::vector<std::string> split(const std::string &s, char separator) { return __tl_split(s, std::string(1, separator), true); }
std::vector<std::string> split(const std::string &s, const std::string &separators) { return __tl_split(s, separators, true); }
/* Only the non-empty items. */
std::vector<std::string> tokenize(const std::string &s, char separator) { return __tl_split(s, std::string(1, separator), false); }
std::vector<std::string> tokenize(const std::string &s, const std::string &separators) { return __tl_split(s, separators, false); }

/* ------------------------------------------------------------------------
 * pattern: testlib's small regular expressions. A pattern is either an
 * alternation a|b|c (every branch a pattern), a group (p), or one item — a
 * character or a class [a-z] / [^...] with a count {n}, {n,m}, ?, * or + —
 * followed by the rest of the pattern. Matching is greedy without going
 * back (so "[0-9]?1" does not match "1"), as in testlib; unescaped spaces
 * are ignored.
 * ---------------------------------------------------------------------- */

class random_t;

class pattern {
public:
    pattern(std::string s);
    std::string next(random_t &rnd) const;
    bool matches(const std::string &s) const { return matchesFrom(s, 0); }
    std::string src() const { return source; }

private:
    bool matchesFrom(const std::string &s, size_t pos) const;

    std::string source;
    std::vector<pattern> children;
    std::vector<char> chars;
    int from;
    int to;
};

/* Whether s[pos] is c and is not escaped by an odd run of backslashes. */
static bool __tl_meta(const std::string &s, size_t pos, char c) {
    if (pos >= s.size() || s[pos] != c)
        return false;
    size_t slashes = 0;
    while (slashes < pos && s[pos - 1 - slashes] == '\\')
        slashes++;
    return slashes % 2 == 0;
}

/* The character at pos, an escaped one taken literally; pos moves past it. */
static char __tl_literal(const std::string &s, size_t &pos) {
    if (s[pos] == '\\')
        pos++;
    return s[pos++];
}

NORETURN static void __tl_badPattern(const std::string &s) {
    __testlib_fail("pattern: Illegal pattern (or part) \"" + s + "\"");
}

static std::vector<char> __tl_charClass(const std::string &s, size_t &pos) {
    if (pos >= s.size())
        __tl_badPattern(s);
    std::vector<char> set;
    if (!__tl_meta(s, pos, '[')) {
        set.push_back(__tl_literal(s, pos));
        return set;
    }
    pos++;
    bool negated = __tl_meta(s, pos, '^');
    if (negated)
        pos++;
    char pending = 0;
    while (pos < s.size() && !__tl_meta(s, pos, ']')) {
        if (pending != 0 && __tl_meta(s, pos, '-')) {
            pos++;
            if (pos + 1 == s.size() || __tl_meta(s, pos, ']')) {
                set.push_back(pending);
                pending = '-';
                continue;
            }
            char last = __tl_literal(s, pos);
            if (pending > last)
                __tl_badPattern(s);
            for (char c = pending; c != last; c++)
                set.push_back(c);
            set.push_back(last);
            pending = 0;
        } else {
            if (pending != 0)
                set.push_back(pending);
            pending = __tl_literal(s, pos);
        }
    }
    if (pending != 0)
        set.push_back(pending);
    if (!__tl_meta(s, pos, ']'))
        __tl_badPattern(s);
    pos++;
    if (negated) {
        std::sort(set.begin(), set.end());
        std::vector<char> rest;
        for (int code = 0; code < 255; code++)
            if (!std::binary_search(set.begin(), set.end(), char(code)))
                rest.push_back(char(code));
        set.swap(rest);
    }
    std::sort(set.begin(), set.end());
    return set;
}

static void __tl_counts(const std::string &s, size_t &pos, int &from, int &to) {
    from = to = 1;
    if (pos >= s.size())
        return;
    if (__tl_meta(s, pos, '?')) {
        from = 0, to = 1, pos++;
    } else if (__tl_meta(s, pos, '*')) {
        from = 0, to = INT_MAX, pos++;
    } else if (__tl_meta(s, pos, '+')) {
        from = 1, to = INT_MAX, pos++;
    } else if (__tl_meta(s, pos, '{')) {
        pos++;
        std::vector<std::string> parts;
        std::string part;
        while (pos < s.size() && !__tl_meta(s, pos, '}')) {
            if (__tl_meta(s, pos, ',')) {
                parts.push_back(part);
                part.clear();
                pos++;
            } else
                part += __tl_literal(s, pos);
        }
        if (!part.empty())
            parts.push_back(part);
        if (!__tl_meta(s, pos, '}') || parts.empty() || parts.size() > 2)
            __tl_badPattern(s);
        pos++;
        int numbers[2];
        for (size_t i = 0; i < parts.size(); i++)
            if (parts[i].empty() || std::sscanf(parts[i].c_str(), "%d", &numbers[i]) != 1)
                __tl_badPattern(s);
        from = numbers[0];
        to = parts.size() == 2 ? numbers[1] : numbers[0];
        if (from > to)
            __tl_badPattern(s);
    }
}

pattern::pattern(std::string s) : source(s), from(0), to(0) {
    std::string t;
    for (size_t i = 0; i < s.size(); i++)
        if (!__tl_meta(s, i, ' '))
            t += s[i];
    s = t;

    int depth = 0, firstClose = -1;
    std::vector<size_t> bars;
    for (size_t i = 0; i < s.size(); i++) {
        if (__tl_meta(s, i, '(')) {
            depth++;
        } else if (__tl_meta(s, i, ')')) {
            depth--;
            if (depth == 0 && firstClose == -1)
                firstClose = int(i);
        } else {
            if (depth < 0)
                __tl_badPattern(s);
            if (depth == 0 && __tl_meta(s, i, '|'))
                bars.push_back(i);
        }
    }
    if (depth != 0)
        __tl_badPattern(s);

    if (bars.empty() && firstClose + 1 == int(s.size()) && __tl_meta(s, 0, '(') && __tl_meta(s, s.size() - 1, ')')) {
        children.push_back(pattern(s.substr(1, s.size() - 2)));
    } else if (!bars.empty()) {
        size_t start = 0;
        bars.push_back(s.size());
        for (size_t i = 0; i < bars.size(); i++) {
            children.push_back(pattern(s.substr(start, bars[i] - start)));
            start = bars[i] + 1;
        }
    } else {
        size_t pos = 0;
        chars = __tl_charClass(s, pos);
        __tl_counts(s, pos, from, to);
        if (pos < s.size())
            children.push_back(pattern(s.substr(pos)));
    }
}

bool pattern::matchesFrom(const std::string &s, size_t pos) const {
    if (to > 0) {
        int run = 0;
        while (pos + run < s.size() && std::binary_search(chars.begin(), chars.end(), s[pos + run]))
            run++;
        if (run < from)
            return false;
        pos += std::min(run, to);
    }
    if (children.empty())
        return pos == s.size();
    for (size_t i = 0; i < children.size(); i++)
        if (children[i].matchesFrom(s, pos))
            return true;
    return false;
}

/* ------------------------------------------------------------------------
 * random_t: testlib's generator — a 48-bit linear congruential generator
 * (multiplier 0x5DEECE66D, addend 0xB) seeded from the command line, so
 * that a generator prints the same test for the same arguments everywhere.
 * ---------------------------------------------------------------------- */

class random_t {
    static const unsigned long long MULT = 0x5DEECE66DULL;
    static const unsigned long long ADD = 0xBULL;
    static const unsigned long long MASK = (1ULL << 48) - 1;
    static const unsigned long long INITIAL = 3905348978240129619ULL;
    /* Below it, wnext takes the max (min) of |type|+1 draws; above, a power of one. */
    static const int WNEXT_DRAWS = 25;

    unsigned long long state;

    long long bits(int n) {
        if (n <= 48) {
            state = (state * MULT + ADD) & MASK;
            return (long long) (state >> (48 - n));
        }
        if (n > 63)
            __testlib_fail("random_t::nextBits(int bits): n must be less than 64");
        long long high = bits(31) << 32;
        long long low = bits(version == 0 ? 31 : 32);
        return high ^ low;
    }

    /* u^(1/(t+1)) for t > 0, 1 - u^(1/(1-t)) for t < 0: the distribution of
       a max (min) of |t|+1 uniform draws, for large |t|. */
    double powerDraw(int type) {
        if (type > 0)
            return std::pow(next() + 0.0, 1.0 / (type + 1));
        return 1 - std::pow(next() + 0.0, 1.0 / (-type + 1));
    }

    template <typename T>
    T weighted(T n, int type) {
        T r = next(n);
        for (int i = 0; i < type; i++)
            r = __testlib_max(r, next(n));
        for (int i = 0; i < -type; i++)
            r = __testlib_min(r, next(n));
        return r;
    }

public:
    /* 0 for generators written before testlib 0.8.7, 1 since; -1 unset. */
    static int version;

    random_t() : state(INITIAL) {}

    void setSeed(int argc, char *argv[]) {
        state = INITIAL;
        for (int i = 1; i < argc; i++) {
            for (const char *p = argv[i]; *p; p++)
                state = state * MULT + (unsigned int) (*p) + ADD;
            state += MULT / ADD;
        }
        state &= MASK;
    }

    void setSeed(long long seed) { state = ((unsigned long long) seed ^ MULT) & MASK; }

    std::string next(const std::string &ptrn) {
        pattern p(ptrn);
        return p.next(*this);
    }

    __TL_PRINTF(2, 3) std::string next(const char *fmt, ...) {
        __TL_FORMAT(fmt, fmt, ptrn);
        return next(ptrn);
    }

    int next(int n) {
        if (n <= 0)
            __testlib_fail("random_t::next(int n): n must be positive");
        if ((n & -n) == n)
            return (int) ((n * (long long) bits(31)) >> 31);
        const long long limit = INT_MAX / n * n;
        long long b;
        do
            b = bits(31);
        while (b >= limit);
        return int(b % n);
    }

    unsigned int next(unsigned int n) {
        if (n >= INT_MAX)
            __testlib_fail("random_t::next(unsigned int n): n must be less INT_MAX");
        return (unsigned int) next(int(n));
    }

    long long next(long long n) {
        if (n <= 0)
            __testlib_fail("random_t::next(long long n): n must be positive");
        const long long limit = __TESTLIB_LONGLONG_MAX / n * n;
        long long b;
        do
            b = bits(63);
        while (b >= limit);
        return b % n;
    }

    unsigned long long next(unsigned long long n) {
        if (n >= (unsigned long long) __TESTLIB_LONGLONG_MAX)
            __testlib_fail("random_t::next(unsigned long long n): n must be less LONGLONG_MAX");
        return (unsigned long long) next((long long) n);
    }

    long next(long n) { return (long) next((long long) n); }

    unsigned long next(unsigned long n) {
        if (n >= (unsigned long) LONG_MAX)
            __testlib_fail("random_t::next(unsigned long n): n must be less LONG_MAX");
        return (unsigned long) next((unsigned long long) n);
    }

    /* [from, to], drawn as a 64-bit value like testlib does. */
    int next(int from, int to) { return int(next((long long) to - from + 1) + from); }

    unsigned int next(unsigned int from, unsigned int to) { return (unsigned int) (next((long long) to - from + 1) + from); }

    long long next(long long from, long long to) { return next(to - from + 1) + from; }

    unsigned long long next(unsigned long long from, unsigned long long to) {
        if (from > to)
            __testlib_fail("random_t::next(unsigned long long from, unsigned long long to): from can't not exceed to");
        return next(to - from + 1) + from;
    }

    long next(long from, long to) { return next(to - from + 1) + from; }

    unsigned long next(unsigned long from, unsigned long to) {
        if (from > to)
            __testlib_fail("random_t::next(unsigned long from, unsigned long to): from can't not exceed to");
        return next(to - from + 1) + from;
    }

    /* [0, 1) with 53 random bits. */
    double next() {
        long long high = bits(26) << 27;
        long long low = bits(27);
        return __testlib_crop((double) (high + low) / (double) (1LL << 53), 0.0, 1.0);
    }

    double next(double n) {
        if (n <= 0.0)
            __testlib_fail("random_t::next(double): n should be positive");
        return __testlib_crop(n * next(), 0.0, n);
    }

    double next(double from, double to) {
        if (from >= to)
            __testlib_fail("random_t::next(double from, double to): from should be strictly less than to");
        return next(to - from) + from;
    }

    template <typename Container>
    typename Container::value_type any(const Container &c) {
        int size = int(c.size());
        if (size <= 0)
            __testlib_fail("random_t::any(const Container& c): c.size() must be positive");
        typename Container::const_iterator it = c.begin();
        std::advance(it, next(size));
        return *it;
    }

    template <typename Iter>
    typename Iter::value_type any(const Iter &begin, const Iter &end) {
        int size = int(std::distance(begin, end));
        if (size <= 0)
            __testlib_fail("random_t::any(const Iter& begin, const Iter& end): range must have positive length");
        Iter it = begin;
        std::advance(it, next(size));
        return *it;
    }

    /* Weighted next: type > 0 leans to the top of the range (the max of
       type+1 draws), type < 0 to the bottom, 0 is next(n). */
    int wnext(int n, int type) {
        if (n <= 0)
            __testlib_fail("random_t::wnext(int n, int type): n must be positive");
        if (std::abs(type) < WNEXT_DRAWS)
            return weighted(n, type);
        return __testlib_crop((int) (double(n) * powerDraw(type)), 0, n);
    }

    long long wnext(long long n, int type) {
        if (n <= 0)
            __testlib_fail("random_t::wnext(long long n, int type): n must be positive");
        if (std::abs(type) < WNEXT_DRAWS)
            return weighted(n, type);
        return __testlib_crop((long long) (double(n) * powerDraw(type)), 0LL, n);
    }

    double wnext(double n, int type) {
        if (n <= 0)
            __testlib_fail("random_t::wnext(double n, int type): n must be positive");
        if (std::abs(type) < WNEXT_DRAWS) {
            double r = next();
            for (int i = 0; i < type; i++)
                r = __testlib_max(r, next());
            for (int i = 0; i < -type; i++)
                r = __testlib_min(r, next());
            return n * r;
        }
        return __testlib_crop(n * powerDraw(type), 0.0, n);
    }

    double wnext(int type) { return wnext(1.0, type); }

    unsigned int wnext(unsigned int n, int type) {
        if (n >= INT_MAX)
            __testlib_fail("random_t::wnext(unsigned int n, int type): n must be less INT_MAX");
        return (unsigned int) wnext(int(n), type);
    }

    unsigned long long wnext(unsigned long long n, int type) {
        if (n >= (unsigned long long) __TESTLIB_LONGLONG_MAX)
            __testlib_fail("random_t::wnext(unsigned long long n, int type): n must be less LONGLONG_MAX");
        return (unsigned long long) wnext((long long) n, type);
    }

    long wnext(long n, int type) { return (long) wnext((long long) n, type); }

    unsigned long wnext(unsigned long n, int type) {
        if (n >= (unsigned long) LONG_MAX)
            __testlib_fail("random_t::wnext(unsigned long n, int type): n must be less LONG_MAX");
        return (unsigned long) wnext((unsigned long long) n, type);
    }

    int wnext(int from, int to, int type) {
        if (from > to)
            __testlib_fail("random_t::wnext(int from, int to, int type): from can't not exceed to");
        return wnext(to - from + 1, type) + from;
    }

    int wnext(unsigned int from, unsigned int to, int type) {
        if (from > to)
            __testlib_fail("random_t::wnext(unsigned int from, unsigned int to, int type): from can't not exceed to");
        return int(wnext(to - from + 1, type) + from);
    }

    long long wnext(long long from, long long to, int type) {
        if (from > to)
            __testlib_fail("random_t::wnext(long long from, long long to, int type): from can't not exceed to");
        return wnext(to - from + 1, type) + from;
    }

    unsigned long long wnext(unsigned long long from, unsigned long long to, int type) {
        if (from > to)
            __testlib_fail("random_t::wnext(unsigned long long from, unsigned long long to, int type): from can't not exceed to");
        return wnext(to - from + 1, type) + from;
    }

    long wnext(long from, long to, int type) {
        if (from > to)
            __testlib_fail("random_t::wnext(long from, long to, int type): from can't not exceed to");
        return wnext(to - from + 1, type) + from;
    }

    unsigned long wnext(unsigned long from, unsigned long to, int type) {
        if (from > to)
            __testlib_fail("random_t::wnext(unsigned long from, unsigned long to, int type): from can't not exceed to");
        return wnext(to - from + 1, type) + from;
    }

    double wnext(double from, double to, int type) {
        if (from >= to)
            __testlib_fail("random_t::wnext(double from, double to, int type): from should be strictly less than to");
        return wnext(to - from, type) + from;
    }

    template <typename Container>
    typename Container::value_type wany(const Container &c, int type) {
        int size = int(c.size());
        if (size <= 0)
            __testlib_fail("random_t::wany(const Container& c, int type): c.size() must be positive");
        typename Container::const_iterator it = c.begin();
        std::advance(it, wnext(size, type));
        return *it;
    }

    template <typename Iter>
    typename Iter::value_type wany(const Iter &begin, const Iter &end, int type) {
        int size = int(std::distance(begin, end));
        if (size <= 0)
            __testlib_fail("random_t::any(const Iter& begin, const Iter& end, int type): range must have positive length");
        Iter it = begin;
        std::advance(it, wnext(size, type));
        return *it;
    }

    /* first, first+1, ..., first+size-1 shuffled: element i trades places
       with one of 0..i. */
    template <typename T, typename E>
    std::vector<E> perm(T size, E first) {
        if (size < 0)
            __testlib_fail("random_t::perm(T size, E first = 0): size must non-negative");
        std::vector<E> p(size);
        for (T i = 0; i < size; i++)
            p[i] = E(first + i);
        for (T i = 1; i < size; i++)
            std::swap(p[i], p[next(i + 1)]);
        return p;
    }

    template <typename T>
    std::vector<T> perm(T size) { return perm(size, T(0)); }

    /* size distinct values of [from, to] in the order drawn. */
    template <typename T>
    std::vector<T> distinct(int size, T from, T to) {
        std::vector<T> result;
        if (size == 0)
            return result;
        if (from > to)
            __testlib_fail("random_t::distinct expected from <= to");
        if (size < 0)
            __testlib_fail("random_t::distinct expected size >= 0");
        uint64_t n = to - from + 1;
        if (uint64_t(size) > n)
            __testlib_fail("random_t::distinct expected size <= to - from + 1");
        /* Drawing until distinct is expected to take this many draws. */
        double draws = 0.0;
        for (int i = 1; i <= size; i++)
            draws += double(n) / double(n - i + 1);
        if (draws < double(n)) {
            std::set<T> seen;
            while (int(seen.size()) < size) {
                T x = T(next(from, to));
                if (seen.insert(x).second)
                    result.push_back(x);
            }
        } else {
            if (n > 1000000000)
                __testlib_fail("random_t::distinct here expected to - from + 1 <= 1000000000");
            std::vector<T> p(perm(int(n), from));
            result.assign(p.begin(), p.begin() + size);
        }
        return result;
    }

    template <typename T>
    std::vector<T> distinct(int size, T upper) {
        if (size < 0)
            __testlib_fail("random_t::distinct expected size >= 0");
        if (size == 0)
            return std::vector<T>();
        if (upper <= 0)
            __testlib_fail("random_t::distinct expected upper > 0");
        if (size > upper)
            __testlib_fail("random_t::distinct expected size <= upper");
        return distinct(size, T(0), upper - 1);
    }

    /* size parts, each at least min_part, adding up to sum: size-1 distinct
       cut points among sum-size*min_part+size-1 places. */
    template <typename T>
    std::vector<T> partition(int size, T sum, T min_part) {
        if (size < 0)
            __testlib_fail("random_t::partition: size < 0");
        if (size == 0 && sum != 0)
            __testlib_fail("random_t::partition: size == 0 && sum != 0");
        if (min_part * size > sum)
            __testlib_fail("random_t::partition: min_part * size > sum");
        if (size == 0)
            return std::vector<T>();
        T free = sum - min_part * size;
        std::vector<T> cuts(size);
        std::vector<T> d = distinct(size - 1, T(1), T(free + size - 1));
        for (int i = 0; i + 1 < size; i++)
            cuts[i + 1] = d[i];
        std::sort(cuts.begin(), cuts.end());
        std::vector<T> parts(size);
        for (int i = 0; i + 1 < size; i++)
            parts[i] = cuts[i + 1] - cuts[i] - 1;
        parts[size - 1] = free + size - 1 - cuts.back();
        for (int i = 0; i < size; i++)
            parts[i] += min_part;
        return parts;
    }

    template <typename T>
    std::vector<T> partition(int size, T sum) { return partition(size, sum, T(1)); }
};

int random_t::version = -1;

std::string pattern::next(random_t &rnd) const {
    if (to == INT_MAX)
        __testlib_fail("pattern::next(random_t& rnd): can't process character '*' for generation");
    std::string result;
    if (to > 0) {
        int count = rnd.next(to - from + 1) + from;
        for (int i = 0; i < count; i++)
            result += chars[rnd.next(int(chars.size()))];
    }
    if (!children.empty())
        result += children[rnd.next(int(children.size()))].next(rnd);
    return result;
}

/* ------------------------------------------------------------------------
 * Readers: a file read whole, or a stream (stdin) read a character at a
 * time — an interactor must not read ahead of what the contestant wrote.
 * Characters come back as testlib gives them: a file's bytes as signed
 * chars, a stream's as 0..255, EOFC at the end.
 * ---------------------------------------------------------------------- */

class __tl_reader {
public:
    virtual ~__tl_reader() {}
    virtual int cur() = 0;
    virtual int next() = 0;
    virtual void unread(int c) = 0;
    virtual bool atEof() = 0;
    virtual int line() const = 0;
    virtual void close() = 0;
    virtual std::vector<int> readChars() { return std::vector<int>(); }
    virtual void markTestCase(int) {}
};

class __tl_memoryReader : public __tl_reader {
    std::string data;
    size_t pos;
    int lines;

public:
    explicit __tl_memoryReader(const std::string &d) : data(d), pos(0), lines(1) {}
    int cur() { return pos < data.size() ? (int) (signed char) data[pos] : EOFC; }
    int next() {
        if (pos >= data.size())
            return EOFC;
        char c = data[pos++];
        if (c == LF)
            lines++;
        return (int) (signed char) c;
    }
    void unread(int c) {
        if (c == EOFC && pos >= data.size())
            return;
        if (pos == 0)
            __testlib_fail("InStream: nothing to unread");
        pos--;
        data[pos] = char(c);
        if (c == LF)
            lines--;
    }
    bool atEof() { return pos >= data.size(); }
    int line() const { return lines; }
    void close() {}
};

class __tl_streamReader : public __tl_reader {
    std::FILE *file;
    bool ended;
    int lines;
    std::vector<int> undo;
    std::vector<int> consumed; /* for the validator's test case markup */

    int get() {
        int c;
        if (!undo.empty()) {
            c = undo.back();
            undo.pop_back();
        } else {
            c = std::getc(file);
            if (c == EOF) {
                ended = true;
                return EOFC;
            }
        }
        if (c == LF)
            lines++;
        consumed.push_back(c);
        return c;
    }

public:
    explicit __tl_streamReader(std::FILE *f) : file(f), ended(false), lines(1) {}
    /* Once the stream has ended, what was put back is lost, as in testlib. */
    int cur() {
        if (ended)
            return EOFC;
        int c = get();
        if (ended)
            return EOFC;
        unread(c);
        return c;
    }
    int next() { return ended ? EOFC : get(); }
    void unread(int c) {
        if (!consumed.empty())
            consumed.pop_back();
        if (c == LF)
            lines--;
        undo.push_back(c);
    }
    bool atEof() {
        if (file == NULL || ended)
            return true;
        int c = next();
        if (c == EOFC)
            return true;
        unread(c);
        return false;
    }
    int line() const { return lines; }
    void close() {
        if (file != NULL && file != stdin)
            std::fclose(file);
    }
    std::vector<int> readChars() { return consumed; }
    void markTestCase(int testCase) { consumed.push_back(testCase + 256); }
};

/* ------------------------------------------------------------------------
 * InStream
 * ---------------------------------------------------------------------- */

struct InStream {
    InStream();
    ~InStream();

    __tl_reader *reader;
    int lastLine;
    std::string name;
    TMode mode;
    bool opened;
    bool stdfile;
    /* Validators read strictly: no whitespace skipped, exact EOLN and EOF. */
    bool strict;
    int readManyIteration;
    size_t maxFileSize;
    size_t maxTokenLength;
    size_t maxMessageLength;
    std::string _tmpReadToken;

    static const int NO_INDEX = INT_MAX;
    /* Markers of the one bracketed part of a message that later parts join. */
    static const char OPEN_BRACKET = char(11);
    static const char CLOSE_BRACKET = char(17);

    void init(std::string fileName, TMode mode);
    void init(std::FILE *f, TMode mode);
    void reset(std::FILE *file = NULL);
    void close();
    void skipBom();

    void setTestCase(int testCase);
    std::vector<int> getReadChars();

    char curChar();
    char nextChar();
    char readChar();
    char readChar(char c);
    char readSpace();
    void skipChar();
    void unreadChar(char c);
    void skipBlanks();

    bool eof();
    bool seekEof();
    bool eoln();
    bool seekEoln();
    void nextLine();
    void readEoln();
    void readEof();

    std::string readWord();
    std::string readToken();
    void readWordTo(std::string &result);
    void readTokenTo(std::string &result);
    std::string readWord(const pattern &p, const std::string &variableName = "");
    std::string readWord(const std::string &ptrn, const std::string &variableName = "");
    std::string readToken(const pattern &p, const std::string &variableName = "");
    std::string readToken(const std::string &ptrn, const std::string &variableName = "");
    void readWordTo(std::string &result, const pattern &p, const std::string &variableName = "");
    void readWordTo(std::string &result, const std::string &ptrn, const std::string &variableName = "");
    void readTokenTo(std::string &result, const pattern &p, const std::string &variableName = "");
    void readTokenTo(std::string &result, const std::string &ptrn, const std::string &variableName = "");
    std::vector<std::string> readWords(int size, const pattern &p, const std::string &variablesName = "", int indexBase = 1);
    std::vector<std::string> readWords(int size, const std::string &ptrn, const std::string &variablesName = "", int indexBase = 1);
    std::vector<std::string> readWords(int size, int indexBase = 1);
    std::vector<std::string> readTokens(int size, const pattern &p, const std::string &variablesName = "", int indexBase = 1);
    std::vector<std::string> readTokens(int size, const std::string &ptrn, const std::string &variablesName = "", int indexBase = 1);
    std::vector<std::string> readTokens(int size, int indexBase = 1);

    long long readLong();
    unsigned long long readUnsignedLong();
    int readInteger();
    int readInt();
    long long readLong(long long minv, long long maxv, const std::string &variableName = "");
    unsigned long long readUnsignedLong(unsigned long long minv, unsigned long long maxv, const std::string &variableName = "");
    unsigned long long readLong(unsigned long long minv, unsigned long long maxv, const std::string &variableName = "");
    int readInteger(int minv, int maxv, const std::string &variableName = "");
    int readInt(int minv, int maxv, const std::string &variableName = "");
    std::vector<long long> readLongs(int size, long long minv, long long maxv, const std::string &variablesName = "", int indexBase = 1);
    std::vector<long long> readLongs(int size, int indexBase = 1);
    std::vector<unsigned long long> readUnsignedLongs(int size, unsigned long long minv, unsigned long long maxv, const std::string &variablesName = "", int indexBase = 1);
    std::vector<unsigned long long> readUnsignedLongs(int size, int indexBase = 1);
    std::vector<int> readInts(int size, int minv, int maxv, const std::string &variablesName = "", int indexBase = 1);
    std::vector<int> readInts(int size, int indexBase = 1);
    std::vector<int> readIntegers(int size, int minv, int maxv, const std::string &variablesName = "", int indexBase = 1);
    std::vector<int> readIntegers(int size, int indexBase = 1);

    double readReal();
    double readDouble();
    double readReal(double minv, double maxv, const std::string &variableName = "");
    double readDouble(double minv, double maxv, const std::string &variableName = "");
    std::vector<double> readReals(int size, double minv, double maxv, const std::string &variablesName = "", int indexBase = 1);
    std::vector<double> readReals(int size, int indexBase = 1);
    std::vector<double> readDoubles(int size, double minv, double maxv, const std::string &variablesName = "", int indexBase = 1);
    std::vector<double> readDoubles(int size, int indexBase = 1);
    double readStrictReal(double minv, double maxv, int minAfterPointDigitCount, int maxAfterPointDigitCount, const std::string &variableName = "");
    double readStrictDouble(double minv, double maxv, int minAfterPointDigitCount, int maxAfterPointDigitCount, const std::string &variableName = "");
    std::vector<double> readStrictReals(int size, double minv, double maxv, int minAfterPointDigitCount, int maxAfterPointDigitCount, const std::string &variablesName = "", int indexBase = 1);
    std::vector<double> readStrictDoubles(int size, double minv, double maxv, int minAfterPointDigitCount, int maxAfterPointDigitCount, const std::string &variablesName = "", int indexBase = 1);

    std::string readString();
    std::string readLine();
    void readStringTo(std::string &result);
    void readLineTo(std::string &result);
    std::vector<std::string> readStrings(int size, int indexBase = 1);
    std::vector<std::string> readLines(int size, int indexBase = 1);
    std::string readString(const pattern &p, const std::string &variableName = "");
    std::string readString(const std::string &ptrn, const std::string &variableName = "");
    std::string readLine(const pattern &p, const std::string &variableName = "");
    std::string readLine(const std::string &ptrn, const std::string &variableName = "");
    void readStringTo(std::string &result, const pattern &p, const std::string &variableName = "");
    void readStringTo(std::string &result, const std::string &ptrn, const std::string &variableName = "");
    void readLineTo(std::string &result, const pattern &p, const std::string &variableName = "");
    void readLineTo(std::string &result, const std::string &ptrn, const std::string &variableName = "");
    std::vector<std::string> readStrings(int size, const pattern &p, const std::string &variablesName = "", int indexBase = 1);
    std::vector<std::string> readStrings(int size, const std::string &ptrn, const std::string &variablesName = "", int indexBase = 1);
    std::vector<std::string> readLines(int size, const pattern &p, const std::string &variablesName = "", int indexBase = 1);
    std::vector<std::string> readLines(int size, const std::string &ptrn, const std::string &variablesName = "", int indexBase = 1);

    NORETURN void quit(TResult result, const char *msg);
    NORETURN void quits(TResult result, std::string msg);
    __TL_PRINTF(3, 4) NORETURN void quitf(TResult result, const char *msg, ...);
    __TL_PRINTF(4, 5) void quitif(bool condition, TResult result, const char *msg, ...);
    __TL_PRINTF(3, 4) void ensuref(bool cond, const char *format, ...);
    void __testlib_ensure(bool cond, std::string message);

private:
    template <typename T>
    NORETURN void rangeViolation(const char *kind, const T &value, const std::string &lo, const std::string &hi,
                                 const std::string &variableName);
    NORETURN void patternMismatch(const char *kind, const std::string &value, const pattern &p,
                                  const std::string &variableName);
    template <typename T>
    void noteBounds(const std::string &variableName, T minv, T maxv, bool minHit, bool maxHit);

    InStream(const InStream &);
    InStream &operator=(const InStream &);
};

InStream inf;
InStream ouf;
InStream ans;
bool appesMode;
std::string appesModeEncoding = "windows-1251";
std::string resultName;
std::string checkerName = "untitled checker";
random_t rnd;
TTestlibMode testlibMode = _unknown;
double __testlib_points = std::numeric_limits<float>::infinity();

/* The interactor's output file. */
std::fstream tout;

NORETURN void quit(TResult result, const std::string &msg);
NORETURN void quit(TResult result, const char *msg);
void setTestCase(int testCase);

void unsetTestCase() {
    __testlib_hasTestCase = false;
    __testlib_testCase = -1;
}

/* ------------------------------------------------------------------------
 * Validator: test set, group and the test overview log (bounds hit by
 * named reads, features, constant bounds, variables).
 * ---------------------------------------------------------------------- */

class Validator {
    struct Hit {
        bool min, max;
        Hit() : min(false), max(false) {}
    };
    /* A bound that stays the same on every read of a variable. */
    struct Constant {
        std::string value;
        bool broken;
        Constant() : broken(false) {}
        void see(const std::string &v) {
            if (v.size() >= 32 || (!value.empty() && value != v))
                broken = true, value.clear();
            else if (!broken && value.empty())
                value = v;
        }
        bool known() const { return !broken && !value.empty(); }
    };
    static const size_t MAX_VARIABLES = 255;

    bool initialized;
    std::string testsetName, groupName, overviewLog, markupFile, caseFile;
    int caseNumber;
    std::map<std::string, Hit> hits;
    std::map<std::string, std::pair<Constant, Constant> > constants;
    std::set<std::string> features, hitFeatures, variables;

    static bool analyzable(const std::string &name) {
        for (size_t i = 0; i < name.size(); i++)
            if ((name[i] >= '0' && name[i] <= '9') || name[i] < ' ')
                return false;
        return true;
    }

    /* "~n" does not count hitting the minimum, "n~" the maximum. */
    static std::string bare(const std::string &name) {
        if (name.size() < 2 || name == "~~")
            return name;
        size_t l = name[0] == '~' ? 1 : 0;
        size_t r = name[name.size() - 1] == '~' ? 1 : 0;
        return name.substr(l, name.size() - l - r);
    }

    static FILE *openLog(const std::string &file, bool &standard) {
        standard = true;
        if (file == "stdout")
            return stdout;
        if (file == "stderr")
            return stderr;
        standard = false;
        return std::fopen(file.c_str(), "wb");
    }

public:
    Validator() : initialized(false), testsetName("tests"), caseNumber(-1) {}

    void initialize() { initialized = true; }

    std::string testset() const {
        if (!initialized)
            __testlib_fail("Validator should be initialized with registerValidation(argc, argv) instead of registerValidation() to support validator.testset()");
        return testsetName;
    }

    std::string group() const {
        if (!initialized)
            __testlib_fail("Validator should be initialized with registerValidation(argc, argv) instead of registerValidation() to support validator.group()");
        return groupName;
    }

    std::string testOverviewLogFileName() const { return overviewLog; }
    std::string testMarkupFileName() const { return markupFile; }
    int testCase() const { return caseNumber; }
    std::string testCaseFileName() const { return caseFile; }

    void setTestset(const char *const v) { testsetName = v; }
    void setGroup(const char *const v) { groupName = v; }
    void setTestOverviewLogFileName(const char *const v) { overviewLog = v; }
    void setTestMarkupFileName(const char *const v) { markupFile = v; }
    void setTestCase(int v) { caseNumber = v; }
    void setTestCaseFileName(const char *const v) { caseFile = v; }

    void addVariable(const std::string &name) {
        if (analyzable(name) && variables.size() < MAX_VARIABLES)
            variables.insert(bare(name));
    }

    void addBoundsHit(const std::string &name, bool minHit, bool maxHit) {
        if (!analyzable(name) || hits.size() >= MAX_VARIABLES)
            return;
        bool ignoreMin = name.size() >= 2 && name != "~~" && name[0] == '~';
        bool ignoreMax = name.size() >= 2 && name != "~~" && name[name.size() - 1] == '~';
        Hit &h = hits[bare(name)];
        h.min = h.min || minHit || ignoreMin;
        h.max = h.max || maxHit || ignoreMax;
    }

    void adjustConstantBounds(const std::string &name, const std::string &lower, const std::string &upper) {
        if (!analyzable(name) || constants.size() >= MAX_VARIABLES)
            return;
        std::pair<Constant, Constant> &c = constants[bare(name)];
        c.first.see(lower);
        c.second.see(upper);
    }

    void addFeature(const std::string &f) {
        if (features.count(f))
            __testlib_fail("Feature " + f + " registered twice.");
        for (size_t i = 0; i < f.size(); i++)
            if (f[i] < ' ')
                __testlib_fail("Feature name '" + f + "' contains restricted characters.");
        features.insert(f);
    }

    void feature(const std::string &f) {
        for (size_t i = 0; i < f.size(); i++)
            if (f[i] < ' ')
                __testlib_fail("Feature name '" + f + "' contains restricted characters.");
        if (!features.count(f))
            __testlib_fail("Feature " + f + " didn't registered via addFeature(feature).");
        hitFeatures.insert(f);
    }

    std::string overview() const {
        std::string log;
        for (std::map<std::string, Hit>::const_iterator i = hits.begin(); i != hits.end(); ++i)
            log += "\"" + i->first + "\":" + (i->second.min ? " min-value-hit" : "") +
                   (i->second.max ? " max-value-hit" : "") + "\n";
        for (std::set<std::string>::const_iterator i = features.begin(); i != features.end(); ++i)
            log += "feature \"" + *i + "\":" + (hitFeatures.count(*i) ? " hit" : "") + "\n";
        for (std::map<std::string, std::pair<Constant, Constant> >::const_iterator i = constants.begin();
             i != constants.end(); ++i)
            if (i->second.first.known() || i->second.second.known())
                log += "constant-bounds \"" + i->first + "\": " +
                       (i->second.first.known() ? i->second.first.value : "?") + " " +
                       (i->second.second.known() ? i->second.second.value : "?") + "\n";
        for (std::set<std::string>::const_iterator i = variables.begin(); i != variables.end(); ++i)
            log += "variable \"" + *i + "\"\n";
        return log;
    }

    void writeTestOverviewLog() {
        if (overviewLog.empty())
            return;
        std::string file = overviewLog;
        overviewLog.clear();
        bool standard;
        FILE *f = openLog(file, standard);
        if (f == NULL)
            __testlib_fail("Validator::writeTestOverviewLog: can't write test overview log to (" + file + ")");
        std::fputs(overview().c_str(), f);
        std::fflush(f);
        if (!standard && std::fclose(f) != 0)
            __testlib_fail("Validator::writeTestOverviewLog: can't close test overview log file (" + file + ")");
    }

    /* The input with "!c<n>;" where each test case starts, for --testMarkupFileName. */
    void writeTestMarkup(const std::vector<int> &chars) {
        if (markupFile.empty() || chars.empty())
            return;
        std::string markup("MU\xF3\x01");
        for (size_t i = 0; i < chars.size(); i++) {
            int c = chars[i];
            if (i + 1 == chars.size() && c == -1)
                continue;
            if (c <= 256) {
                if (char(c) == '\\' || char(c) == '!')
                    markup += '\\';
                markup += char(c);
            } else
                markup += "!c" + vtos(c - 256) + ";";
        }
        bool standard;
        FILE *f = openLog(markupFile, standard);
        if (f == NULL)
            __testlib_fail("Validator::writeTestMarkup: can't write test markup to (" + markupFile + ")");
        std::fwrite(markup.data(), 1, markup.size(), f);
        std::fflush(f);
        if (!standard)
            std::fclose(f);
    }

    /* One test case of a multi-test input, for --testCase. */
    void writeTestCase(const std::vector<int> &chars) {
        if (caseNumber <= 0 || chars.empty())
            return;
        std::string content, found;
        bool inCase = false;
        for (size_t i = 0; i < chars.size(); i++) {
            int c = chars[i];
            if (i + 1 == chars.size() && c == -1)
                continue;
            if (c <= 256) {
                content += char(c);
                continue;
            }
            if (inCase)
                found = content, inCase = false;
            content.clear();
            if (c - 256 == caseNumber)
                inCase = true;
        }
        if (inCase)
            found = content;
        if (found.empty())
            return;
        bool standard;
        FILE *f = openLog(caseFile.empty() ? "stdout" : caseFile, standard);
        if (f == NULL)
            __testlib_fail("Validator::writeTestCase: can't write test case to (" + caseFile + ")");
        std::fwrite(found.data(), 1, found.size(), f);
        std::fflush(f);
        if (!standard)
            std::fclose(f);
    }
} validator;

/* A checker's --testset and --group. */
class Checker {
    bool initialized;
    std::string testsetName, groupName;

public:
    Checker() : initialized(false), testsetName("tests") {}
    void initialize() { initialized = true; }
    std::string testset() const {
        if (!initialized)
            __testlib_fail("Checker should be initialized with registerTestlibCmd(argc, argv) instead of registerTestlibCmd() to support checker.testset()");
        return testsetName;
    }
    std::string group() const {
        if (!initialized)
            __testlib_fail("Checker should be initialized with registerTestlibCmd(argc, argv) instead of registerTestlibCmd() to support checker.group()");
        return groupName;
    }
    void setTestset(const char *const v) { testsetName = v; }
    void setGroup(const char *const v) { groupName = v; }
} checker;

/* ------------------------------------------------------------------------
 * Options of generators: -key value, -key=value, --key value, -n10, and
 * positional arguments by index.
 * ---------------------------------------------------------------------- */

struct TestlibOpt {
    std::string value;
    bool used;
    TestlibOpt() : used(false) {}
};

std::vector<std::string> __testlib_argv;
std::map<std::string, TestlibOpt> __testlib_opts;
bool __testlib_ensureNoUnusedOptsFlag = false;
bool __testlib_ensureNoUnusedOptsSuppressed = false;

/* 1 for "-key", 2 for "--key" (a key starts with a letter), 0 otherwise. */
size_t getOptType(char *s) {
    if (s == NULL || std::strlen(s) <= 1 || s[0] != '-')
        return 0;
    if (std::isalpha((unsigned char) s[1]))
        return 1;
    if (s[1] == '-' && std::isalpha((unsigned char) s[2]))
        return 2;
    return 0;
}

void prepareOpts(int argc, char *argv[]) {
    if (argc <= 0)
        __testlib_fail("Opts: expected argc>=0 but found " + toString(argc));
    __testlib_opts.clear();
    for (int i = 1; i < argc;) {
        size_t type = getOptType(argv[i]);
        if (type == 0) {
            i++;
            continue;
        }
        std::string key(argv[i] + type), value;
        size_t eq = key.find('=');
        int step = 1;
        if (eq != std::string::npos) {
            value = key.substr(eq + 1);
            key = key.substr(0, eq);
        } else if (i + 1 < argc && getOptType(argv[i + 1]) == 0) {
            value = argv[i + 1];
            step = 2;
        } else if (key.size() > 1 && std::isdigit((unsigned char) key[1])) {
            value = key.substr(1);
            key = key.substr(0, 1);
        } else
            value = "true";
        __testlib_opts[key].value = value;
        i += step;
    }
    __testlib_argv.assign(argv, argv + argc);
}

std::string __testlib_indexToArgv(int index) {
    if (index < 0 || index >= int(__testlib_argv.size()))
        __testlib_fail("Opts: index '" + toString(index) + "' is out of range [0," + toString(__testlib_argv.size()) + ")");
    return __testlib_argv[size_t(index)];
}

std::string __testlib_keyToOpts(const std::string &key) {
    std::map<std::string, TestlibOpt>::iterator it = __testlib_opts.find(key);
    if (it == __testlib_opts.end())
        __testlib_fail("Opts: unknown key '" + compress(key) + "'");
    it->second.used = true;
    return it->second.value;
}

/* An option's number without its exponent: "1.5e3" is "1500", "-2e-1" is
   "-0.2"; a number without one is returned as it is. */
static std::string __tl_optExpand(const std::string &s) {
    size_t e = s.find_first_of("eE");
    if (e == std::string::npos)
        return s;
    if (s.find_first_of("eE", e + 1) != std::string::npos)
        __testlib_fail("Opts: expected typical exponential notation but '" + compress(s) + "' found");
    std::string mant = s.substr(0, e), ex = s.substr(e + 1);
    if (!ex.empty() && ex[0] == '+')
        ex = ex.substr(1);
    if (ex.empty() || ex.size() > 20 || mant.size() > 20)
        __testlib_fail("Opts: expected typical exponential notation but '" + compress(s) + "' found");
    if (!mant.empty() && mant[0] == '+')
        mant = mant.substr(1);
    bool negative = !mant.empty() && mant[0] == '-';
    if (negative)
        mant = mant.substr(1);
    bool ok = !ex.empty();
    for (size_t i = (ex[0] == '-' ? 1 : 0); i < ex.size(); i++)
        ok = ok && ex[i] >= '0' && ex[i] <= '9';
    size_t dots = 0;
    for (size_t i = 0; i < mant.size(); i++) {
        if (mant[i] == '.')
            dots++;
        else if (mant[i] < '0' || mant[i] > '9')
            ok = false;
    }
    if (!ok || ex == "-" || dots > 1 || mant.empty())
        __testlib_fail("Opts: expected typical exponential notation but '" + compress(s) + "' found");
    int shift = std::atoi(ex.c_str());
    size_t dot = mant.find('.');
    std::string digits = mant;
    long long point = (long long) (dot == std::string::npos ? mant.size() : dot);
    if (dot != std::string::npos)
        digits.erase(dot, 1);
    point += shift;
    while (point > (long long) digits.size())
        digits += '0';
    while (point < 0)
        digits.insert(digits.begin(), '0'), point++;
    std::string ip = digits.substr(0, size_t(point)), fp = digits.substr(size_t(point));
    while (!ip.empty() && ip[0] == '0')
        ip.erase(0, 1);
    while (!fp.empty() && fp[fp.size() - 1] == '0')
        fp.erase(fp.size() - 1);
    if (ip.empty())
        ip = "0";
    return (negative ? "-" : "") + ip + (fp.empty() ? "" : "." + fp);
}

template <typename T>
T optValueToIntegral(const std::string &raw, bool nonnegative) {
    std::string s = __tl_optExpand(raw);
    if (s.empty())
        __testlib_fail("Opts: expected integer but '" + compress(raw) + "' found");
    size_t pos = 0;
    bool negative = s[0] == '-';
    if (negative) {
        if (nonnegative)
            __testlib_fail("Opts: expected non-negative integer but '" + compress(raw) + "' found");
        pos = 1;
    }
    T value = 0;
    long double approx = 0;
    for (size_t i = pos; i < s.size(); i++) {
        if (s[i] < '0' || s[i] > '9')
            __testlib_fail("Opts: expected integer but '" + compress(raw) + "' found");
        value = T(value * 10 + (s[i] - '0'));
        approx = approx * 10 + (s[i] - '0');
    }
    if (negative)
        value = T(-value), approx = -approx;
    if (std::fabs((long double) value - approx) > 0.1)
        __testlib_fail("Opts: integer overflow: expected integer but '" + compress(raw) + "' found");
    return value;
}

long double optValueToLongDouble(const std::string &raw) {
    std::string s = __tl_optExpand(raw);
    if (s.empty())
        __testlib_fail("Opts: expected float number but '" + compress(raw) + "' found");
    size_t pos = s[0] == '-' ? 1 : 0;
    long double value = 0, scale = 1;
    bool point = false;
    for (size_t i = pos; i < s.size(); i++) {
        if (s[i] == '.' && !point) {
            point = true;
            continue;
        }
        if (s[i] < '0' || s[i] > '9')
            __testlib_fail("Opts: expected float number but '" + compress(raw) + "' found");
        if (point) {
            scale *= 10;
            value += (s[i] - '0') / scale;
        } else
            value = value * 10 + (s[i] - '0');
    }
    return pos == 1 ? -value : value;
}

bool has_opt(const std::string &key) {
    __testlib_ensureNoUnusedOptsFlag = true;
    return __testlib_opts.count(key) != 0;
}

template <typename T>
static T __tl_optParse(const std::string &value, const std::string &what, std::true_type /* integral */) {
    (void) what;
    return optValueToIntegral<T>(value, std::is_unsigned<T>::value);
}

template <typename T>
static T __tl_optParse(const std::string &value, const std::string &what, std::false_type /* integral */) {
    (void) what;
    return T(optValueToLongDouble(value));
}

template <typename T>
struct __tl_opt {
    static T byIndex(int index) {
        return __tl_optParse<T>(__testlib_indexToArgv(index), "", std::integral_constant<bool, std::is_integral<T>::value>());
    }
    static T byKey(const std::string &key) {
        return __tl_optParse<T>(__testlib_keyToOpts(key), key, std::integral_constant<bool, std::is_integral<T>::value>());
    }
};

template <>
struct __tl_opt<std::string> {
    static std::string byIndex(int index) { return __testlib_indexToArgv(index); }
    static std::string byKey(const std::string &key) { return __testlib_keyToOpts(key); }
};

template <>
struct __tl_opt<bool> {
    static bool parse(const std::string &value, const std::string &where) {
        if (value == "true" || value == "1")
            return true;
        if (value == "false" || value == "0")
            return false;
        __testlib_fail("Opts: " + where + ": expected bool true/false or 0/1 but '" + compress(value) + "' found");
    }
    static bool byIndex(int index) {
        return parse(__testlib_indexToArgv(index), "opt by index '" + toString(index) + "'");
    }
    static bool byKey(const std::string &key) {
        if (!has_opt(key))
            return false;
        return parse(__testlib_keyToOpts(key), "key '" + compress(key) + "'");
    }
};

template <typename T>
T opt(int index) { return __tl_opt<T>::byIndex(index); }

std::string opt(int index) { return opt<std::string>(index); }

template <typename T>
T opt(int index, const T &default_value) {
    if (index >= int(__testlib_argv.size()))
        return default_value;
    return opt<T>(index);
}

std::string opt(int index, const std::string &default_value) { return opt<std::string>(index, default_value); }

template <typename T>
T opt(const std::string &key) { return __tl_opt<T>::byKey(key); }

std::string opt(const std::string &key) { return opt<std::string>(key); }

template <typename T>
T opt(const std::string &key, const T &default_value) {
    if (!has_opt(key))
        return default_value;
    return opt<T>(key);
}

std::string opt(const std::string &key, const std::string &default_value) {
    return opt<std::string>(key, default_value);
}

void ensureNoUnusedOpts() {
    for (std::map<std::string, TestlibOpt>::const_iterator i = __testlib_opts.begin(); i != __testlib_opts.end(); ++i)
        if (!i->second.used)
            __testlib_fail("Opts: unused key '" + compress(i->first) + "'");
}

void suppressEnsureNoUnusedOpts() { __testlib_ensureNoUnusedOptsSuppressed = true; }

/* ------------------------------------------------------------------------
 * The end of a program: what testlib checks when main returns without a
 * verdict (a checker must quit, a validator must readEof, no unknown
 * options), and the validator's logs.
 * ---------------------------------------------------------------------- */

struct TestlibFinalizeGuard {
    static bool alive;
    static bool registered;
    int quitCount, readEofCount;

    TestlibFinalizeGuard() : quitCount(0), readEofCount(0) {}
    ~TestlibFinalizeGuard();
};

bool TestlibFinalizeGuard::alive = true;
bool TestlibFinalizeGuard::registered = false;
TestlibFinalizeGuard testlibFinalizeGuard;
/* Set while exiting: a verdict found then ends the process at once. */
static bool __tl_finalizing = false;

void disableFinalizeGuard() { TestlibFinalizeGuard::alive = false; }

/* ------------------------------------------------------------------------
 * Verdicts
 * ---------------------------------------------------------------------- */

int resultExitCode(TResult r) {
    switch (r) {
    case _ok: return OK_EXIT_CODE;
    case _wa: return WA_EXIT_CODE;
    case _pe: return PE_EXIT_CODE;
    case _fail: return FAIL_EXIT_CODE;
    case _dirt: return DIRT_EXIT_CODE;
    case _points: return POINTS_EXIT_CODE;
    case _unexpected_eof:
#ifdef ENABLE_UNEXPECTED_EOF
        return UNEXPECTED_EOF_EXIT_CODE;
#else
        return PE_EXIT_CODE;
#endif
    default:
        break;
    }
    if (r >= _partially)
        return PC_BASE_EXIT_CODE + (r - _partially);
    return FAIL_EXIT_CODE;
}

NORETURN void halt(int exitCode) {
    __testlib_exitCode = exitCode;
    if (__tl_finalizing) {
        std::fflush(NULL);
        std::_Exit(exitCode);
    }
    std::exit(exitCode);
}

/* Where the one bracketed part of msg is: [open, close], or false. */
static bool __tl_brackets(const std::string &msg, size_t &open, size_t &close) {
    const char o = InStream::OPEN_BRACKET, c = InStream::CLOSE_BRACKET;
    if (std::count(msg.begin(), msg.end(), o) != 1 || std::count(msg.begin(), msg.end(), c) != 1)
        return false;
    open = msg.find(o);
    close = msg.find(c);
    return open < close;
}

/* "msg (extra)", or "msg (earlier, extra)" when msg has its part already. */
static std::string __testlib_appendMessage(const std::string &msg, const std::string &extra) {
    size_t open, close;
    if (!__tl_brackets(msg, open, close))
        return msg + " " + InStream::OPEN_BRACKET + extra + InStream::CLOSE_BRACKET;
    size_t at = msg.find(extra, open);
    if (at != std::string::npos && at < close)
        return msg;
    std::string result(msg);
    result.insert(close, ", " + extra);
    return result;
}

static std::string __testlib_toPrintableMessage(const std::string &msg) {
    size_t open, close;
    if (!__tl_brackets(msg, open, close))
        return msg;
    std::string result(msg);
    result[open] = '(';
    result[close] = ')';
    return result;
}

static void __tl_xmlWrite(FILE *f, const std::string &msg) {
    for (size_t i = 0; i < msg.size(); i++) {
        char c = msg[i];
        if (c == '&')
            std::fputs("&amp;", f);
        else if (c == '<')
            std::fputs("&lt;", f);
        else if (c == '>')
            std::fputs("&gt;", f);
        else if (c == '"')
            std::fputs("&quot;", f);
        else if (c >= 0 && c <= 31)
            std::fputc('.', f);
        else
            std::fputc(c, f);
    }
}

/* The one way a testlib program ends with a verdict. A read error on the
   input or answer is the problem's fault (FAIL, with the stream's name);
   accepting while the contestant's output goes on is a presentation error. */
NORETURN void InStream::quit(TResult result, const char *msg) {
    if (TestlibFinalizeGuard::alive)
        testlibFinalizeGuard.quitCount++;

    std::string message = trim(msg);
    if (__testlib_hasTestCase) {
        if (result != _ok && result != _points)
            message = __testlib_appendMessage(message, "test case " + vtos(__testlib_testCase));
        else
            message = __testlib_appendMessage(message, vtos(__testlib_testCase) +
                                                           (__testlib_testCase == 1 ? " test case" : " test cases"));
    }
    if (message.size() > maxMessageLength) {
        std::string warn = "message length exceeds " + vtos(maxMessageLength) + ", the message is truncated: ";
        message = warn + message.substr(0, maxMessageLength - warn.size());
    }
#ifndef ENABLE_UNEXPECTED_EOF
    if (result == _unexpected_eof)
        result = _pe;
#endif
    if (testlibMode == _scorer && result != _fail)
        quits(_fail, "Scorer should return points only. Don't use a quit function.");

    if (mode != _output && result != _fail) {
        std::string named = __testlib_appendMessage(message, name);
        if (mode == _input && testlibMode == _validator && lastLine != -1)
            named = __testlib_appendMessage(named, "line " + vtos(lastLine));
        quits(_fail, named);
    }

    if ((result == _ok || result == _points || result >= _partially) && testlibMode != _interactor && !ouf.seekEof())
        quit(_dirt, "Extra information in the output file");

    std::string head;
    bool partial = false;
    switch (result) {
    case _ok: head = "ok "; break;
    case _wa: head = "wrong answer "; break;
    case _pe: head = "wrong output format "; break;
    case _fail: head = "FAIL "; break;
    case _dirt: head = "wrong output format "; result = _pe; break;
    case _points: head = "points "; break;
    case _unexpected_eof: head = "unexpected eof "; break;
    default:
        if (result < _partially)
            quit(_fail, "What is the code ??? ");
        head = testlib_format_("partially correct (%d) ", int(result - _partially));
        partial = true;
    }

    std::string printable = __testlib_toPrintableMessage(message);
    if (!resultName.empty()) {
        FILE *f = std::fopen(resultName.c_str(), "w");
        if (f == NULL) {
            resultName.clear();
            quit(_fail, "Can not write to the result file");
        }
        if (appesMode) {
            static const char *const outcomes[] = {"accepted", "wrong-answer", "presentation-error", "fail", "fail",
                                                   "points", "reserved", "reserved", "unexpected-eof"};
            std::fprintf(f, "<?xml version=\"1.0\" encoding=\"%s\"?>", appesModeEncoding.c_str());
            if (partial)
                std::fprintf(f, "<result outcome = \"partially-correct\" pctype = \"%d\">", int(result - _partially));
            else if (result == _points) {
                if (__testlib_points == std::numeric_limits<float>::infinity())
                    quit(_fail, "Expected points, but infinity found");
                std::fprintf(f, "<result outcome = \"points\" points = \"%s\">",
                             removeDoubleTrailingZeroes(testlib_format_("%.10f", __testlib_points)).c_str());
            } else
                std::fprintf(f, "<result outcome = \"%s\">", outcomes[int(result)]);
            __tl_xmlWrite(f, printable);
            std::fputs("</result>\n", f);
        } else
            std::fputs(printable.c_str(), f);
        if (std::fclose(f) != 0) {
            resultName.clear();
            quit(_fail, "Can not write to the result file");
        }
    } else {
        std::fputs(head.c_str(), stderr);
        std::fputs(printable.c_str(), stderr);
    }
    std::fputs("\n", stderr);

    inf.close();
    ouf.close();
    ans.close();
    if (tout.is_open())
        tout.close();
    if (!resultName.empty())
        std::fputs("See file to check exit message\n", stderr);
    halt(resultExitCode(result));
}

NORETURN void InStream::quits(TResult result, std::string msg) { quit(result, msg.c_str()); }

NORETURN void InStream::quitf(TResult result, const char *msg, ...) {
    __TL_FORMAT(msg, msg, message);
    quit(result, message.c_str());
}

void InStream::quitif(bool condition, TResult result, const char *msg, ...) {
    if (condition) {
        __TL_FORMAT(msg, msg, message);
        quit(result, message.c_str());
    }
}

void InStream::ensuref(bool cond, const char *format, ...) {
    if (!cond) {
        __TL_FORMAT(format, format, message);
        __testlib_ensure(cond, message);
    }
}

void InStream::__testlib_ensure(bool cond, std::string message) {
    if (!cond)
        quit(_wa, message.c_str());
}

NORETURN void quit(TResult result, const std::string &msg) { ouf.quit(result, msg.c_str()); }

NORETURN void quit(TResult result, const char *msg) { ouf.quit(result, msg); }

__TL_PRINTF(2, 3) NORETURN void quitf(TResult result, const char *format, ...) {
    __TL_FORMAT(format, format, message);
    quit(result, message);
}

__TL_PRINTF(3, 4) void quitif(bool condition, TResult result, const char *format, ...) {
    if (condition) {
        __TL_FORMAT(format, format, message);
        quit(result, message);
    }
}

NORETURN static void __testlib_fail(const std::string &message) { quitf(_fail, "%s", message.c_str()); }

/* Points must be a number in [0, 1E6]; anything else is the checker's failure. */
double __testlib_preparePoints(double p) {
    volatile double points = p;
    if (__testlib_isNaN(points))
        quit(_fail, "Parameter 'points' can't be nan");
    if (__testlib_isInfinite(points))
        quit(_fail, "Parameter 'points' can't be infinite");
    if (points < -1E-8)
        quit(_fail, "Parameter 'points' can't be negative");
    if (points <= 0.0)
        points = +0.0;
    if (points > 1E6 + 1E-8)
        quit(_fail, "Parameter 'points' can't be greater than 1E6");
    if (points >= 1E6)
        points = 1E6;
    return points;
}

NORETURN static void __tl_quitPoints(const std::string &points, const std::string &message) {
    quit(_points, message.empty() ? points : points + " " + message);
}

NORETURN void quitp(double points, const std::string &message = "") {
    __testlib_points = __testlib_preparePoints(points);
    __tl_quitPoints(removeDoubleTrailingZeroes(testlib_format_("%.10f", __testlib_points)), message);
}

NORETURN void quitp(float points, const std::string &message = "") { quitp(double(points), message); }

NORETURN void quitp(long double points, const std::string &message = "") { quitp(double(points), message); }

NORETURN void quitp(int points, const std::string &message = "") {
    __testlib_points = __testlib_preparePoints(points);
    __tl_quitPoints(vtos(points), message);
}

template <typename F>
__TL_PRINTF(2, 3) NORETURN void quitp(F points, const char *format, ...) {
    __TL_FORMAT(format, format, message);
    quitp(points, message);
}

/* Points described by the checker (Polygon's points_info), no spaces. */
NORETURN void quitpi(const std::string &points_info, const std::string &message = "") {
    if (points_info.find(' ') != std::string::npos)
        quit(_fail, "Parameter 'points_info' can't contain spaces");
    quit(_points, "points_info=" + points_info + (message.empty() ? "" : " " + message));
}

static inline void __testlib_ensure(bool cond, const std::string &msg) {
    if (!cond)
        quit(_fail, msg);
}

#define ensure(cond) __testlib_ensure((cond), "Condition failed: \"" #cond "\"")
#define STRINGIZE_DETAIL(x) (#x)
#define STRINGIZE(x) STRINGIZE_DETAIL((x))
#define ensure_ext(cond) __testlib_ensure((cond), "Line " STRINGIZE(__LINE__) ": Condition failed: \"" #cond "\"")

__TL_PRINTF(2, 3) inline void ensuref(bool cond, const char *format, ...) {
    if (!cond) {
        __TL_FORMAT(format, format, message);
        __testlib_ensure(cond, message);
    }
}

TestlibFinalizeGuard::~TestlibFinalizeGuard() {
    bool wasAlive = alive;
    alive = false;
    __tl_finalizing = true;
    if (wasAlive) {
        if (testlibMode == _checker && quitCount == 0)
            __testlib_fail("Checker must end with quit or quitf call.");
        if (testlibMode == _validator && readEofCount == 0 && quitCount == 0)
            __testlib_fail("Validator must end with readEof call.");
        if (__testlib_ensureNoUnusedOptsFlag && !__testlib_ensureNoUnusedOptsSuppressed)
            ensureNoUnusedOpts();
        if (!registered)
            __testlib_fail("Call register-function in the first line of the main (registerTestlibCmd or other similar)");
    }
    if (__testlib_exitCode == 0) {
        validator.writeTestOverviewLog();
        if (testlibMode == _validator && inf.reader != NULL) {
            std::vector<int> chars = inf.reader->readChars();
            validator.writeTestMarkup(chars);
            validator.writeTestCase(chars);
        }
    }
}

/* ------------------------------------------------------------------------
 * InStream: opening and characters
 * ---------------------------------------------------------------------- */

InStream::InStream()
    : reader(NULL), lastLine(-1), mode(_input), opened(false), stdfile(false), strict(false),
      readManyIteration(NO_INDEX), maxFileSize(128 * 1024 * 1024), maxTokenLength(32 * 1024 * 1024),
      maxMessageLength(32000) {}

InStream::~InStream() { close(); }

void InStream::close() {
    if (reader != NULL) {
        reader->close();
        delete reader;
        reader = NULL;
    }
    opened = false;
}

void InStream::reset(std::FILE *file) {
    if (opened && stdfile)
        quit(_fail, "Can't reset standard handle");
    if (opened)
        close();
    if (stdfile) {
        reader = new __tl_streamReader(file);
        opened = true;
        return;
    }
    std::FILE *f = file != NULL ? file : std::fopen(name.c_str(), "rb");
    if (f == NULL) {
        if (mode == _output)
            quits(_pe, "Output file not found: \"" + name + "\"");
        if (mode == _answer)
            quits(_fail, "Answer file not found: \"" + name + "\"");
        reader = NULL;
        opened = false;
        return;
    }
    std::string data;
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        data.append(buf, n);
    if (std::ferror(f))
        __testlib_fail("InStream: unable to read (" + name + ")");
    std::fclose(f);
    reader = new __tl_memoryReader(data);
    opened = true;
}

void InStream::init(std::string fileName, TMode m) {
    opened = false;
    name = fileName;
    stdfile = false;
    mode = m;
    std::FILE *probe = std::fopen(fileName.c_str(), "rb");
    if (probe != NULL) {
        std::fseek(probe, 0, SEEK_END);
        long size = std::ftell(probe);
        std::fclose(probe);
        if (size > 0 && size_t(size) > maxFileSize)
            quitf(_pe, "File size exceeds %d bytes, size is %d", int(maxFileSize), int(size));
    }
    reset();
}

void InStream::init(std::FILE *f, TMode m) {
    opened = false;
    name = "untitled";
    mode = m;
    if (f == stdin)
        name = "stdin", stdfile = true;
    if (f == stdout)
        name = "stdout", stdfile = true;
    if (f == stderr)
        name = "stderr", stdfile = true;
    reset(f);
}

void InStream::skipBom() {
    static const char bom[] = "\xEF\xBB\xBF";
    int matched = 0;
    while (matched < 3 && curChar() == bom[matched]) {
        skipChar();
        matched++;
    }
    if (matched < 3)
        while (matched > 0)
            unreadChar(bom[--matched]);
}

void InStream::setTestCase(int testCase) {
    if (testlibMode != _validator || mode != _input || !stdfile || this != &inf)
        __testlib_fail("InStream::setTestCase can be used only for inf in validator-mode."
                       " Actually, prefer setTestCase function instead of InStream member");
    if (testCase < 0 || testCase > __TESTLIB_MAX_TEST_CASE)
        __testlib_fail(testlib_format_("testCase expected fit in [1,%d], but %d doesn't", __TESTLIB_MAX_TEST_CASE, testCase));
    reader->markTestCase(testCase);
}

std::vector<int> InStream::getReadChars() {
    if (testlibMode != _validator || mode != _input || !stdfile || this != &inf)
        __testlib_fail("InStream::getReadChars can be used only for inf in validator-mode.");
    return reader == NULL ? std::vector<int>() : reader->readChars();
}

/* Test cases are numbered from 1; a program that starts at 0 is shifted. */
void setTestCase(int testCase) {
    static bool first = true, zeroBased = false;
    if (first && testCase == 0)
        zeroBased = true;
    first = false;
    if (zeroBased)
        testCase++;
    __testlib_hasTestCase = true;
    __testlib_testCase = testCase;
    if (testlibMode == _validator)
        inf.setTestCase(testCase);
}

char InStream::curChar() { return char(reader->cur()); }
char InStream::nextChar() { return char(reader->next()); }
char InStream::readChar() { return nextChar(); }
void InStream::skipChar() { reader->next(); }
void InStream::unreadChar(char c) { reader->unread(c); }

char InStream::readChar(char c) {
    lastLine = reader->line();
    char found = readChar();
    if (found != c) {
        std::string got = isEoln(found) ? "#" + vtos(int(found)) : "'" + std::string(1, found) + "'";
        quit(_pe, ("Unexpected character " + got + ", but '" + std::string(1, c) + "' expected").c_str());
    }
    return found;
}

char InStream::readSpace() { return readChar(' '); }

void InStream::skipBlanks() {
    while (isBlanks(reader->cur()))
        reader->next();
}

bool InStream::eof() {
    if (reader == NULL)
        return true;
    return reader->atEof();
}

bool InStream::seekEof() {
    if (reader == NULL)
        return true;
    skipBlanks();
    return eof();
}

/* An end of line: LF, CR LF or the end of the file; strictly, LF only. */
bool InStream::eoln() {
    if (reader == NULL)
        return true;
    int c = reader->next();
    if (strict) {
        if (c == LF)
            return true;
        reader->unread(c);
        return false;
    }
    if (c == EOFC || c == LF)
        return true;
    if (c == CR) {
        int d = reader->next();
        if (d == LF)
            return true;
        reader->unread(d);
        reader->unread(CR);
        return false;
    }
    reader->unread(c);
    return false;
}

bool InStream::seekEoln() {
    if (reader == NULL)
        return true;
    int c;
    do
        c = reader->next();
    while (c == SPACE || c == TAB);
    reader->unread(c);
    return eoln();
}

void InStream::nextLine() { readLine(); }

void InStream::readEoln() {
    lastLine = reader->line();
    if (!eoln())
        quit(_pe, "Expected EOLN");
}

void InStream::readEof() {
    lastLine = reader->line();
    if (!eof())
        quit(_pe, "Expected EOF");
    if (TestlibFinalizeGuard::alive && this == &inf)
        testlibFinalizeGuard.readEofCount++;
}

/* ------------------------------------------------------------------------
 * InStream: tokens
 * ---------------------------------------------------------------------- */

void InStream::readWordTo(std::string &result) {
    if (!strict)
        skipBlanks();
    lastLine = reader->line();
    int c = reader->next();
    if (c == EOFC)
        quit(_unexpected_eof, "Unexpected end of file - token expected");
    if (isBlanks(c))
        quit(_pe, "Unexpected white-space - token expected");
    result.clear();
    while (c != EOFC && !isBlanks(c)) {
        result += char(c);
        if (result.size() > maxTokenLength)
            quitf(_pe, "Length of token exceeds %d, token is '%s...'", int(maxTokenLength), __testlib_part(result).c_str());
        c = reader->next();
    }
    reader->unread(c);
    if (result.empty())
        quit(_unexpected_eof, "Unexpected end of file or white-space - token expected");
}

std::string InStream::readWord() {
    readWordTo(_tmpReadToken);
    return _tmpReadToken;
}

std::string InStream::readToken() { return readWord(); }
void InStream::readTokenTo(std::string &result) { readWordTo(result); }

/* "<Kind> parameter [name=n] equals to 11, violates the range [1, 10]" and its
   forms without a name or inside readInts (element n[3] / [index=3]). */
static std::string __tl_subject(const char *kind, const std::string &variableName, int iteration) {
    std::string k(kind);
    if (iteration == InStream::NO_INDEX) {
        if (variableName.empty())
            return k;
        /* Lines are "Line [name=s]", other values "Token parameter [name=s]". */
        return k + (k == "Line" ? "" : " parameter") + " [name=" + variableName + "]";
    }
    if (variableName.empty())
        return k + " element [index=" + vtos(iteration) + "]";
    return k + " element " + variableName + "[" + vtos(iteration) + "]";
}

template <typename T>
NORETURN void InStream::rangeViolation(const char *kind, const T &value, const std::string &lo, const std::string &hi,
                                       const std::string &variableName) {
    std::string subject = __tl_subject(kind, variableName, readManyIteration);
    std::string v = vtos(value);
    std::string range = "the range [" + lo + ", " + hi + "]";
    if (variableName.empty() && readManyIteration == NO_INDEX)
        quit(_wa, (subject + " " + v + " violates " + range).c_str());
    quit(_wa, (subject + " equals to " + v + ", violates " + range).c_str());
}

NORETURN void InStream::patternMismatch(const char *kind, const std::string &value, const pattern &p,
                                        const std::string &variableName) {
    std::string subject = __tl_subject(kind, variableName, readManyIteration);
    std::string tail = "\"" + __testlib_part(value) + "\"";
    std::string match = "correspond to pattern \"" + p.src() + "\"";
    if (variableName.empty() && readManyIteration == NO_INDEX)
        quit(_wa, (subject + " " + tail + " doesn't " + match).c_str());
    if (variableName.empty())
        quit(_wa, (subject + " equals to " + tail + " doesn't " + match).c_str());
    quit(_wa, (subject + " equals to " + tail + ", doesn't " + match).c_str());
}

template <typename T>
void InStream::noteBounds(const std::string &variableName, T minv, T maxv, bool minHit, bool maxHit) {
    if (!strict || variableName.empty())
        return;
    validator.addBoundsHit(variableName, minHit, maxHit);
    std::ostringstream lo, hi;
    lo << std::fixed;
    hi << std::fixed;
    if (std::is_integral<T>::value) {
        validator.adjustConstantBounds(variableName, vtos(minv), vtos(maxv));
    } else {
        lo << minv;
        hi << maxv;
        validator.adjustConstantBounds(variableName, lo.str(), hi.str());
    }
    validator.addVariable(variableName);
}

std::string InStream::readWord(const pattern &p, const std::string &variableName) {
    readWordTo(_tmpReadToken);
    if (!p.matches(_tmpReadToken))
        patternMismatch("Token", _tmpReadToken, p, variableName);
    if (strict && !variableName.empty())
        validator.addVariable(variableName);
    return _tmpReadToken;
}

std::string InStream::readWord(const std::string &ptrn, const std::string &variableName) {
    return readWord(pattern(ptrn), variableName);
}

std::string InStream::readToken(const pattern &p, const std::string &variableName) { return readWord(p, variableName); }

std::string InStream::readToken(const std::string &ptrn, const std::string &variableName) {
    return readWord(ptrn, variableName);
}

void InStream::readWordTo(std::string &result, const pattern &p, const std::string &variableName) {
    readWordTo(result);
    if (!p.matches(result)) {
        readManyIteration = NO_INDEX; /* this form never names an index */
        patternMismatch("Token", result, p, variableName);
    }
    if (strict && !variableName.empty())
        validator.addVariable(variableName);
}

void InStream::readWordTo(std::string &result, const std::string &ptrn, const std::string &variableName) {
    readWordTo(result, pattern(ptrn), variableName);
}

void InStream::readTokenTo(std::string &result, const pattern &p, const std::string &variableName) {
    readWordTo(result, p, variableName);
}

void InStream::readTokenTo(std::string &result, const std::string &ptrn, const std::string &variableName) {
    readWordTo(result, ptrn, variableName);
}

/* size values read by one, separated by exactly one space when strict
   (spaced), with their index in messages. */
#define __TL_READ_MANY(what, readOne, type, spaced)                      \
    if (size < 0)                                                        \
        quit(_fail, what ": size should be non-negative.");              \
    if (size > 100000000)                                                \
        quit(_fail, what ": size should be at most 100000000.");         \
    std::vector<type> result(size);                                      \
    readManyIteration = indexBase;                                       \
    for (int i = 0; i < size; i++) {                                     \
        result[i] = readOne;                                             \
        readManyIteration++;                                             \
        if (strict && spaced && i + 1 < size)                            \
            readSpace();                                                 \
    }                                                                    \
    readManyIteration = NO_INDEX;                                        \
    return result;

#define __TL_NOTE_VARIABLE(names)                                        \
    if (strict && !names.empty())                                        \
        validator.addVariable(names);

std::vector<std::string> InStream::readWords(int size, const pattern &p, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readWords", readWord(p, variablesName), std::string, true)
}

std::vector<std::string> InStream::readWords(int size, const std::string &ptrn, const std::string &variablesName, int indexBase) {
    pattern p(ptrn);
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readWords", readWord(p, variablesName), std::string, true)
}

std::vector<std::string> InStream::readWords(int size, int indexBase) {
    __TL_READ_MANY("readWords", readWord(), std::string, true)
}

std::vector<std::string> InStream::readTokens(int size, const pattern &p, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readTokens", readWord(p, variablesName), std::string, true)
}

std::vector<std::string> InStream::readTokens(int size, const std::string &ptrn, const std::string &variablesName, int indexBase) {
    pattern p(ptrn);
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readTokens", readWord(p, variablesName), std::string, true)
}

std::vector<std::string> InStream::readTokens(int size, int indexBase) {
    __TL_READ_MANY("readTokens", readWord(), std::string, true)
}

/* ------------------------------------------------------------------------
 * Numbers: testlib's strict formats. An integer is -?[1-9][0-9]* or 0 (no
 * '+', no leading zeros, no "-0"); a double has digits, '.', 'e', signs
 * only (no nan, inf or hex); a strict double is -?D(.D+)? with a bounded
 * number of digits after the point.
 * ---------------------------------------------------------------------- */

NORETURN static void __tl_notA(InStream &in, const char *what, const std::string &token, const char *extra = "") {
    in.quit(_pe, ("Expected " + std::string(what) + ", but \"" + __testlib_part(token) + "\" found" + extra).c_str());
}

static bool __tl_hasNul(const std::string &s) { return s.find('\0') != std::string::npos; }

/* strtod over the whole token: false unless all of it is the number. */
static bool __tl_scanDouble(const char *s, double &value) {
    char *end = NULL;
    value = std::strtod(s, &end);
    return end != s && *end == '\0';
}

static inline double stringToDouble(InStream &in, const char *buffer) {
    std::string s(buffer);
    int digits = 0, minus = 0, plus = 0, points = 0, exps = 0;
    for (size_t i = 0; i < s.size(); i++) {
        char c = s[i];
        if (c >= '0' && c <= '9')
            digits++;
        else if (c == 'e' || c == 'E')
            exps++;
        else if (c == '-')
            minus++;
        else if (c == '+')
            plus++;
        else if (c == '.')
            points++;
        else
            __tl_notA(in, "double", s);
    }
    if (digits == 0 || minus > 2 || plus > 2 || points > 1 || exps > 1)
        __tl_notA(in, "double", s);
    double value;
    if (!__tl_scanDouble(buffer, value) || __testlib_isNaN(value))
        __tl_notA(in, "double", s);
    return value;
}

static inline double stringToDouble(InStream &in, const std::string &buffer) {
    if (__tl_hasNul(buffer))
        __tl_notA(in, "double", buffer, " (it contains \\0)");
    return stringToDouble(in, buffer.c_str());
}

static inline double stringToStrictDouble(InStream &in, const char *buffer, int minAfterPointDigitCount,
                                          int maxAfterPointDigitCount) {
    if (minAfterPointDigitCount < 0)
        in.quit(_fail, "stringToStrictDouble: minAfterPointDigitCount should be non-negative.");
    if (minAfterPointDigitCount > maxAfterPointDigitCount)
        in.quit(_fail, "stringToStrictDouble: minAfterPointDigitCount should be less or equal to maxAfterPointDigitCount.");
    std::string s(buffer);
    size_t n = s.size();
    if (n == 0 || n > 1000 || (s[0] != '-' && (s[0] < '0' || s[0] > '9')))
        __tl_notA(in, "strict double", s);
    size_t point = std::string::npos;
    for (size_t i = 1; i + 1 < n; i++) {
        bool digit = s[i] >= '0' && s[i] <= '9';
        if (s[i] == '.' && point == std::string::npos)
            point = i;
        else if (!digit)
            __tl_notA(in, "strict double", s);
    }
    if (s[n - 1] < '0' || s[n - 1] > '9')
        __tl_notA(in, "strict double", s);
    int after = point == std::string::npos ? 0 : int(n - point - 1);
    if (after < minAfterPointDigitCount || after > maxAfterPointDigitCount)
        in.quit(_pe, ("Expected strict double with number of digits after point in range [" + vtos(minAfterPointDigitCount) +
                      "," + vtos(maxAfterPointDigitCount) + "], but \"" + __testlib_part(s) + "\" found").c_str());
    /* The first digit comes first or right after the minus; no zeros in front. */
    size_t first = s.find_first_of("0123456789");
    if (first > 1)
        __tl_notA(in, "strict double", s);
    if (s[first] == '0' && first + 1 < n && s[first + 1] >= '0' && s[first + 1] <= '9')
        __tl_notA(in, "strict double", s);
    bool neg = s[0] == '-';
    double value;
    if (!__tl_scanDouble(buffer, value) || __testlib_isNaN(value) || __testlib_isInfinite(value))
        __tl_notA(in, "double", s);
    if (neg && value >= 0)
        in.quit(_pe, ("Redundant minus in \"" + __testlib_part(s) + "\" found").c_str());
    return value;
}

static inline double stringToStrictDouble(InStream &in, const std::string &buffer, int minAfterPointDigitCount,
                                          int maxAfterPointDigitCount) {
    if (__tl_hasNul(buffer))
        __tl_notA(in, "double", buffer, " (it contains \\0)");
    return stringToStrictDouble(in, buffer.c_str(), minAfterPointDigitCount, maxAfterPointDigitCount);
}

static inline long long stringToLongLong(InStream &in, const char *buffer) {
    std::string s(buffer);
    if (s.empty() || s.size() > 20)
        __tl_notA(in, "integer", s);
    size_t start = (s.size() > 1 && s[0] == '-') ? 1 : 0;
    for (size_t i = start; i < s.size(); i++)
        if (s[i] < '0' || s[i] > '9')
            __tl_notA(in, "integer", s);
    /* "0" alone; no "-0", no "007". */
    if (s[start] == '0' && (s.size() > start + 1 || start == 1))
        __tl_notA(in, "integer", s);
    unsigned long long magnitude = 0;
    for (size_t i = start; i < s.size(); i++) {
        unsigned d = unsigned(s[i] - '0');
        if (magnitude > (9223372036854775808ULL - d) / 10)
            __tl_notA(in, "integer", s);
        magnitude = magnitude * 10 + d;
    }
    if (start == 0 && magnitude > 9223372036854775807ULL)
        __tl_notA(in, "integer", s);
    return start == 1 ? (long long) (0 - magnitude) : (long long) magnitude;
}

static inline long long stringToLongLong(InStream &in, const std::string &buffer) {
    if (__tl_hasNul(buffer))
        __tl_notA(in, "integer", buffer, " (it contains \\0)");
    return stringToLongLong(in, buffer.c_str());
}

static inline unsigned long long stringToUnsignedLongLong(InStream &in, const char *buffer) {
    std::string s(buffer);
    if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0'))
        __tl_notA(in, "unsigned integer", s);
    unsigned long long value = 0;
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] < '0' || s[i] > '9')
            __tl_notA(in, "unsigned integer", s);
        unsigned d = unsigned(s[i] - '0');
        if (value > (ULLONG_MAX - d) / 10)
            __tl_notA(in, "unsigned integer", s);
        value = value * 10 + d;
    }
    return value;
}

static inline unsigned long long stringToUnsignedLongLong(InStream &in, const std::string &buffer) {
    if (__tl_hasNul(buffer))
        __tl_notA(in, "unsigned integer", buffer, " (it contains \\0)");
    return stringToUnsignedLongLong(in, buffer.c_str());
}

long long InStream::readLong() {
    if (!strict && seekEof())
        quit(_unexpected_eof, "Unexpected end of file - int64 expected");
    readWordTo(_tmpReadToken);
    return stringToLongLong(*this, _tmpReadToken);
}

unsigned long long InStream::readUnsignedLong() {
    if (!strict && seekEof())
        quit(_unexpected_eof, "Unexpected end of file - int64 expected");
    readWordTo(_tmpReadToken);
    return stringToUnsignedLongLong(*this, _tmpReadToken);
}

int InStream::readInteger() {
    if (!strict && seekEof())
        quit(_unexpected_eof, "Unexpected end of file - int32 expected");
    readWordTo(_tmpReadToken);
    long long value = stringToLongLong(*this, _tmpReadToken);
    if (value < INT_MIN || value > INT_MAX)
        __tl_notA(*this, "int32", _tmpReadToken);
    return int(value);
}

int InStream::readInt() { return readInteger(); }

long long InStream::readLong(long long minv, long long maxv, const std::string &variableName) {
    long long v = readLong();
    if (v < minv || v > maxv)
        rangeViolation("Integer", v, toHumanReadableString(minv), toHumanReadableString(maxv), variableName);
    noteBounds(variableName, minv, maxv, v == minv, v == maxv);
    return v;
}

unsigned long long InStream::readUnsignedLong(unsigned long long minv, unsigned long long maxv, const std::string &variableName) {
    unsigned long long v = readUnsignedLong();
    if (v < minv || v > maxv)
        rangeViolation("Unsigned integer", v, toHumanReadableString(minv), toHumanReadableString(maxv), variableName);
    noteBounds(variableName, minv, maxv, v == minv, v == maxv);
    return v;
}

unsigned long long InStream::readLong(unsigned long long minv, unsigned long long maxv, const std::string &variableName) {
    return readUnsignedLong(minv, maxv, variableName);
}

int InStream::readInt(int minv, int maxv, const std::string &variableName) {
    int v = readInt();
    if (v < minv || v > maxv)
        rangeViolation("Integer", v, toHumanReadableString(minv), toHumanReadableString(maxv), variableName);
    noteBounds(variableName, minv, maxv, v == minv, v == maxv);
    return v;
}

int InStream::readInteger(int minv, int maxv, const std::string &variableName) { return readInt(minv, maxv, variableName); }

std::vector<long long> InStream::readLongs(int size, long long minv, long long maxv, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readLongs", readLong(minv, maxv, variablesName), long long, true)
}

std::vector<long long> InStream::readLongs(int size, int indexBase) {
    __TL_READ_MANY("readLongs", readLong(), long long, true)
}

std::vector<unsigned long long> InStream::readUnsignedLongs(int size, unsigned long long minv, unsigned long long maxv,
                                                            const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readUnsignedLongs", readUnsignedLong(minv, maxv, variablesName), unsigned long long, true)
}

std::vector<unsigned long long> InStream::readUnsignedLongs(int size, int indexBase) {
    __TL_READ_MANY("readUnsignedLongs", readUnsignedLong(), unsigned long long, true)
}

std::vector<int> InStream::readInts(int size, int minv, int maxv, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readInts", readInt(minv, maxv, variablesName), int, true)
}

std::vector<int> InStream::readInts(int size, int indexBase) {
    __TL_READ_MANY("readInts", readInt(), int, true)
}

std::vector<int> InStream::readIntegers(int size, int minv, int maxv, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readIntegers", readInt(minv, maxv, variablesName), int, true)
}

std::vector<int> InStream::readIntegers(int size, int indexBase) {
    __TL_READ_MANY("readIntegers", readInt(), int, true)
}

double InStream::readReal() {
    if (!strict && seekEof())
        quit(_unexpected_eof, "Unexpected end of file - double expected");
    return stringToDouble(*this, readWord());
}

double InStream::readDouble() { return readReal(); }

double InStream::readReal(double minv, double maxv, const std::string &variableName) {
    double v = readReal();
    if (v < minv || v > maxv)
        rangeViolation("Double", v, vtos(minv), vtos(maxv), variableName);
    noteBounds(variableName, minv, maxv, doubleDelta(minv, v) < 1E-12, doubleDelta(maxv, v) < 1E-12);
    return v;
}

double InStream::readDouble(double minv, double maxv, const std::string &variableName) {
    return readReal(minv, maxv, variableName);
}

std::vector<double> InStream::readReals(int size, double minv, double maxv, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readReals", readReal(minv, maxv, variablesName), double, true)
}

std::vector<double> InStream::readReals(int size, int indexBase) {
    __TL_READ_MANY("readReals", readReal(), double, true)
}

std::vector<double> InStream::readDoubles(int size, double minv, double maxv, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readDoubles", readDouble(minv, maxv, variablesName), double, true)
}

std::vector<double> InStream::readDoubles(int size, int indexBase) {
    __TL_READ_MANY("readDoubles", readDouble(), double, true)
}

double InStream::readStrictReal(double minv, double maxv, int minAfterPointDigitCount, int maxAfterPointDigitCount,
                                const std::string &variableName) {
    if (!strict && seekEof())
        quit(_unexpected_eof, "Unexpected end of file - strict double expected");
    double v = stringToStrictDouble(*this, readWord(), minAfterPointDigitCount, maxAfterPointDigitCount);
    if (v < minv || v > maxv)
        rangeViolation("Strict double", v, vtos(minv), vtos(maxv), variableName);
    noteBounds(variableName, minv, maxv, doubleDelta(minv, v) < 1E-12, doubleDelta(maxv, v) < 1E-12);
    return v;
}

double InStream::readStrictDouble(double minv, double maxv, int minAfterPointDigitCount, int maxAfterPointDigitCount,
                                  const std::string &variableName) {
    return readStrictReal(minv, maxv, minAfterPointDigitCount, maxAfterPointDigitCount, variableName);
}

std::vector<double> InStream::readStrictReals(int size, double minv, double maxv, int minAfterPointDigitCount,
                                              int maxAfterPointDigitCount, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readStrictReals",
                   readStrictReal(minv, maxv, minAfterPointDigitCount, maxAfterPointDigitCount, variablesName), double, true)
}

std::vector<double> InStream::readStrictDoubles(int size, double minv, double maxv, int minAfterPointDigitCount,
                                                int maxAfterPointDigitCount, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readStrictDoubles",
                   readStrictDouble(minv, maxv, minAfterPointDigitCount, maxAfterPointDigitCount, variablesName), double, true)
}

/* ------------------------------------------------------------------------
 * InStream: lines
 * ---------------------------------------------------------------------- */

/* The rest of the line without its end (LF or CR LF), which is consumed:
   strictly it must be there. */
void InStream::readStringTo(std::string &result) {
    if (reader == NULL)
        quit(_pe, "Expected line");
    result.clear();
    for (;;) {
        int c = reader->cur();
        if (c == LF || c == EOFC)
            break;
        if (c == CR) {
            /* A CR before LF ends the line; a lone CR is skipped, as in testlib. */
            c = reader->next();
            if (reader->cur() == LF) {
                reader->unread(c);
                break;
            }
        }
        lastLine = reader->line();
        result += char(reader->next());
    }
    if (strict)
        readEoln();
    else
        eoln();
}

std::string InStream::readString() {
    readStringTo(_tmpReadToken);
    return _tmpReadToken;
}

std::string InStream::readLine() { return readString(); }
void InStream::readLineTo(std::string &result) { readStringTo(result); }

std::vector<std::string> InStream::readStrings(int size, int indexBase) {
    __TL_READ_MANY("readStrings", readString(), std::string, false)
}

std::vector<std::string> InStream::readLines(int size, int indexBase) {
    __TL_READ_MANY("readLines", readString(), std::string, false)
}

void InStream::readStringTo(std::string &result, const pattern &p, const std::string &variableName) {
    readStringTo(result);
    if (!p.matches(result))
        patternMismatch("Line", result, p, variableName);
    if (strict && !variableName.empty())
        validator.addVariable(variableName);
}

void InStream::readStringTo(std::string &result, const std::string &ptrn, const std::string &variableName) {
    readStringTo(result, pattern(ptrn), variableName);
}

std::string InStream::readString(const pattern &p, const std::string &variableName) {
    readStringTo(_tmpReadToken, p, variableName);
    return _tmpReadToken;
}

std::string InStream::readString(const std::string &ptrn, const std::string &variableName) {
    readStringTo(_tmpReadToken, ptrn, variableName);
    return _tmpReadToken;
}

std::string InStream::readLine(const pattern &p, const std::string &variableName) { return readString(p, variableName); }

std::string InStream::readLine(const std::string &ptrn, const std::string &variableName) {
    return readString(ptrn, variableName);
}

void InStream::readLineTo(std::string &result, const pattern &p, const std::string &variableName) {
    readStringTo(result, p, variableName);
}

void InStream::readLineTo(std::string &result, const std::string &ptrn, const std::string &variableName) {
    readStringTo(result, ptrn, variableName);
}

std::vector<std::string> InStream::readStrings(int size, const pattern &p, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readStrings", readString(p, variablesName), std::string, false)
}

std::vector<std::string> InStream::readStrings(int size, const std::string &ptrn, const std::string &variablesName, int indexBase) {
    pattern p(ptrn);
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readStrings", readString(p, variablesName), std::string, false)
}

std::vector<std::string> InStream::readLines(int size, const pattern &p, const std::string &variablesName, int indexBase) {
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readLines", readString(p, variablesName), std::string, false)
}

std::vector<std::string> InStream::readLines(int size, const std::string &ptrn, const std::string &variablesName, int indexBase) {
    pattern p(ptrn);
    __TL_NOTE_VARIABLE(variablesName)
    __TL_READ_MANY("readLines", readString(p, variablesName), std::string, false)
}

/* ------------------------------------------------------------------------
 * expectedButFound: "<prefix>: expected 'X', but found 'Y'".
 * ---------------------------------------------------------------------- */

NORETURN void __testlib_expectedButFound(TResult result, std::string expected, std::string found, const char *prepend) {
    std::string head = std::strlen(prepend) != 0 ? compress(prepend) + ": " : "";
    quit(result, head + "expected '" + compress(expected) + "', but found '" + compress(found) + "'");
}

NORETURN void __testlib_expectedButFound(TResult result, double expected, double found, const char *prepend) {
    __testlib_expectedButFound(result, removeDoubleTrailingZeroes(testlib_format_("%.12f", expected)),
                               removeDoubleTrailingZeroes(testlib_format_("%.12f", found)), prepend);
}

template <typename T>
struct __tl_ebf {
    static std::string show(const T &v) { return vtos(v); }
};
template <>
struct __tl_ebf<std::string> {
    static std::string show(const std::string &v) { return v; }
};
template <>
struct __tl_ebf<const char *> {
    static std::string show(const char *v) { return std::string(v); }
};
template <>
struct __tl_ebf<double> {
    static std::string show(double v) { return removeDoubleTrailingZeroes(testlib_format_("%.12f", v)); }
};
template <>
struct __tl_ebf<float> {
    static std::string show(float v) { return __tl_ebf<double>::show(double(v)); }
};
template <>
struct __tl_ebf<long double> {
    static std::string show(long double v) { return __tl_ebf<double>::show(double(v)); }
};

template <typename T>
NORETURN void expectedButFound(TResult result, T expected, T found, const char *prependFormat = "", ...) {
    __TL_FORMAT(prependFormat, prependFormat, prepend);
    __testlib_expectedButFound(result, __tl_ebf<T>::show(expected), __tl_ebf<T>::show(found), prepend.c_str());
}

/* ------------------------------------------------------------------------
 * Registration
 * ---------------------------------------------------------------------- */

static void __testlib_ensuresPreconditions() {
    static_assert(sizeof(int) == 4, "testlib assumes 32-bit int");
    static_assert(sizeof(long long) == 8, "testlib assumes 64-bit long long");
    static_assert(sizeof(double) == 8, "testlib assumes 64-bit double");
    if (!__testlib_isNaN(+__testlib_nan()) || !__testlib_isNaN(-__testlib_nan()))
        quit(_fail, "Function __testlib_isNaN is not working correctly: possible reason is '-ffast-math'");
}

std::string __testlib_testset;
std::string __testlib_group;

std::string getTestset() { return __testlib_testset; }
std::string getGroup() { return __testlib_group; }

static void __testlib_set_testset_and_group(int argc, char *argv[]) {
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp("--testset", argv[i])) {
            if (i + 1 < argc && std::strlen(argv[i + 1]) > 0)
                __testlib_testset = argv[++i];
            else
                quit(_fail, std::string("Expected non-empty testset after --testset command line parameter"));
        } else if (!std::strcmp("--group", argv[i])) {
            if (i + 1 < argc)
                __testlib_group = argv[++i];
            else
                quit(_fail, std::string("Expected group after --group command line parameter"));
        }
    }
}

NORETURN void __testlib_help() {
    std::fprintf(stderr, "TESTLIB %s (AlgoItny's testlib-compatible header)\n", VERSION);
    std::fprintf(stderr, "Checker name: \"%s\"\n\n", checkerName.c_str());
    std::fprintf(stderr, "Program must be run with the following arguments: \n");
    std::fprintf(stderr, "    [--testset testset] [--group group] <input-file> <output-file> <answer-file> [<report-file> [<-appes>]]\n\n");
    __testlib_exitCode = FAIL_EXIT_CODE;
    std::exit(FAIL_EXIT_CODE);
}

/* Generators: version 1 is testlib's generator since 0.8.7, 0 the one before. */
void registerGen(int argc, char *argv[], int randomGeneratorVersion) {
    if (randomGeneratorVersion < 0 || randomGeneratorVersion > 1)
        quitf(_fail, "Random generator version is expected to be 0 or 1.");
    random_t::version = randomGeneratorVersion;
    __testlib_ensuresPreconditions();
    TestlibFinalizeGuard::registered = true;
    testlibMode = _generator;
    rnd.setSeed(argc, argv);
    prepareOpts(argc, argv);
}

#ifdef USE_RND_AS_BEFORE_087
void registerGen(int argc, char *argv[]) { registerGen(argc, argv, 0); }
#else
#ifdef __GNUC__
__attribute__((deprecated("Use registerGen(argc, argv, 0) or registerGen(argc, argv, 1)."
                          " The third parameter stands for the random generator version.")))
#endif
void registerGen(int argc, char *argv[]) {
    std::fprintf(stderr, "Use registerGen(argc, argv, 0) or registerGen(argc, argv, 1)."
                         " The third parameter stands for the random generator version."
                         " If you are trying to compile old generator use macro -DUSE_RND_AS_BEFORE_087 or registerGen(argc, argv, 0)."
                         " Version 1 has been released on Spring, 2013. Use it to write new generators.\n\n");
    registerGen(argc, argv, 0);
}
#endif

void setAppesModeEncoding(std::string encoding) { appesModeEncoding = lowerCase(encoding); }

/* Result file and -appes from a checker's or interactor's arguments. */
static void __tl_resultArgs(const std::vector<std::string> &args, const char *usage) {
    resultName.clear();
    appesMode = false;
    if (args.size() >= 5)
        resultName = args[4];
    if (args.size() == 6) {
        if (args[5] != "-APPES" && args[5] != "-appes") {
            resultName.clear();
            quit(_fail, std::string("Program must be run with the following arguments: ") + usage);
        }
        appesMode = true;
    }
}

void registerInteraction(int argc, char *argv[]) {
    __testlib_ensuresPreconditions();
    __testlib_set_testset_and_group(argc, argv);
    TestlibFinalizeGuard::registered = true;
    testlibMode = _interactor;
    if (argc > 1 && !std::strcmp("--help", argv[1]))
        __testlib_help();
    if (argc < 3 || argc > 6)
        quit(_fail, std::string("Program must be run with the following arguments: ") +
                        "<input-file> <output-file> [<answer-file> [<report-file> [<-appes>]]]" +
                        "\nUse \"--help\" to get help information");
    __tl_resultArgs(std::vector<std::string>(argv, argv + argc),
                    "<input-file> <output-file> <answer-file> [<report-file> [<-appes>]]");
    inf.init(argv[1], _input);
    tout.open(argv[2], std::ios_base::out);
    if (tout.fail() || !tout.is_open())
        quit(_fail, std::string("Can not write to the test-output-file '") + argv[2] + "'");
    ouf.init(stdin, _output);
    if (argc >= 4)
        ans.init(argv[3], _answer);
    else
        ans.name = "unopened answer stream";
}

void registerValidation() {
    __testlib_ensuresPreconditions();
    TestlibFinalizeGuard::registered = true;
    testlibMode = _validator;
    inf.init(stdin, _input);
    inf.strict = true;
}

void registerValidation(int argc, char *argv[]) {
    registerValidation();
    __testlib_set_testset_and_group(argc, argv);
    validator.initialize();
    const std::string usage = "Validator must be run with the following arguments:"
                              " [--testset testset] [--group group] [--testOverviewLogFileName fileName]"
                              " [--testMarkupFileName fileName] [--testCase testCase] [--testCaseFileName fileName]";
    for (int i = 1; i < argc; i++) {
        std::string a(argv[i]);
        bool known = a == "--testset" || a == "--group" || a == "--testOverviewLogFileName" ||
                     a == "--testMarkupFileName" || a == "--testCase" || a == "--testCaseFileName";
        if (!known)
            continue;
        if (i + 1 >= argc || (a == "--testset" && std::strlen(argv[i + 1]) == 0))
            quit(_fail, usage);
        const char *v = argv[++i];
        if (a == "--testset")
            validator.setTestset(v);
        else if (a == "--group")
            validator.setGroup(v);
        else if (a == "--testOverviewLogFileName")
            validator.setTestOverviewLogFileName(v);
        else if (a == "--testMarkupFileName")
            validator.setTestMarkupFileName(v);
        else if (a == "--testCaseFileName")
            validator.setTestCaseFileName(v);
        else {
            long long n = stringToLongLong(inf, v);
            if (n < 1 || n >= __TESTLIB_MAX_TEST_CASE)
                quit(_fail, testlib_format_("Argument testCase should be between 1 and %d, but ", __TESTLIB_MAX_TEST_CASE) +
                                toString(n) + " found");
            validator.setTestCase(int(n));
        }
    }
}

void addFeature(const std::string &f) {
    if (testlibMode != _validator)
        quit(_fail, "Features are supported in validators only.");
    validator.addFeature(f);
}

void feature(const std::string &f) {
    if (testlibMode != _validator)
        quit(_fail, "Features are supported in validators only.");
    validator.feature(f);
}

void registerTestlibCmd(int argc, char *argv[]) {
    __testlib_ensuresPreconditions();
    __testlib_set_testset_and_group(argc, argv);
    TestlibFinalizeGuard::registered = true;
    testlibMode = _checker;
    checker.initialize();
    std::vector<std::string> args(1, argv[0]);
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp("--testset", argv[i])) {
            if (i + 1 < argc && std::strlen(argv[i + 1]) > 0)
                checker.setTestset(argv[++i]);
            else
                quit(_fail, std::string("Expected testset after --testset command line parameter"));
        } else if (!std::strcmp("--group", argv[i])) {
            if (i + 1 < argc)
                checker.setGroup(argv[++i]);
            else
                quit(_fail, std::string("Expected group after --group command line parameter"));
        } else
            args.push_back(argv[i]);
    }
    if (args.size() > 1 && args[1] == "--help")
        __testlib_help();
    if (args.size() < 4 || args.size() > 6)
        quit(_fail, std::string("Program must be run with the following arguments: ") +
                        "[--testset testset] [--group group] <input-file> <output-file> <answer-file> [<report-file> [<-appes>]]" +
                        "\nUse \"--help\" to get help information");
    __tl_resultArgs(args, "<input-file> <output-file> <answer-file> [<report-file> [<-appes>]]");
    inf.init(args[1], _input);
    ouf.init(args[2], _output);
    ouf.skipBom();
    ans.init(args[3], _answer);
}

void registerTestlib(int argc, ...) {
    if (argc < 3 || argc > 5)
        quit(_fail, std::string("Program must be run with the following arguments: ") +
                        "<input-file> <output-file> <answer-file> [<report-file> [<-appes>]]");
    std::vector<char *> argv(size_t(argc) + 1);
    va_list ap;
    va_start(ap, argc);
    argv[0] = NULL;
    for (int i = 0; i < argc; i++)
        argv[size_t(i) + 1] = va_arg(ap, char *);
    va_end(ap);
    registerTestlibCmd(argc + 1, &argv[0]);
}

__TL_PRINTF(1, 2) void setName(const char *format, ...) {
    __TL_FORMAT(format, format, name);
    checkerName = name;
}

/* ------------------------------------------------------------------------
 * Generators' helpers
 * ---------------------------------------------------------------------- */

/* rnd's shuffle, the same on every compiler: element i trades places with
   one of 0..i. */
template <typename It>
void shuffle(It first, It last) {
    if (first == last)
        return;
    for (It i = first + 1; i != last; ++i)
        std::iter_swap(i, first + rnd.next(int(i - first) + 1));
}

template <typename It>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((error("Don't use random_shuffle(), use shuffle() instead")))
#endif
void random_shuffle(It, It) {
    quitf(_fail, "Don't use random_shuffle(), use shuffle() instead");
}

#ifdef __GLIBC__
#define RAND_THROW_STATEMENT throw()
#else
#define RAND_THROW_STATEMENT
#endif

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((error("Don't use rand(), use rnd.next() instead")))
#endif
int rand() RAND_THROW_STATEMENT {
    quitf(_fail, "Don't use rand(), use rnd.next() instead");
}

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((error("Don't use srand(), you should use 'registerGen(argc, argv, 1);' to initialize generator seed "
                     "by hash code of the command line params. The third parameter is randomGeneratorVersion "
                     "(currently the latest is 1).")))
#endif
void srand(unsigned int seed) RAND_THROW_STATEMENT {
    quitf(_fail, "Don't use srand(), you should use 'registerGen(argc, argv, 1);' to initialize generator seed "
                 "by hash code of the command line params. The third parameter is randomGeneratorVersion "
                 "(currently the latest is 1) [ignored seed=%u].", seed);
}

/* A generator of several tests writes test i to the file named i. */
void startTest(int test) {
    const std::string file = vtos(test);
    if (std::freopen(file.c_str(), "wt", stdout) == NULL)
        __testlib_fail("Unable to write file '" + file + "'");
}

template <typename T>
struct is_iterable {
    template <typename U>
    static char test(typename U::iterator *);
    template <typename U>
    static long test(U *);
    static const bool value = sizeof(test<T>(0)) == 1;
};

template <bool B, class T = void>
struct __testlib_enable_if {};

template <class T>
struct __testlib_enable_if<true, T> {
    typedef T type;
};

/* A value, or a container's elements separated by spaces (a string is a value). */
template <typename T>
typename __testlib_enable_if<!is_iterable<T>::value, void>::type __testlib_print_one(const T &t) {
    std::cout << t;
}

template <typename T>
typename __testlib_enable_if<is_iterable<T>::value, void>::type __testlib_print_one(const T &t) {
    for (typename T::const_iterator i = t.begin(); i != t.end(); ++i) {
        if (i != t.begin())
            std::cout << " ";
        std::cout << *i;
    }
}

inline void __testlib_print_one(const std::string &t) { std::cout << t; }

template <typename A, typename B>
void __println_range(A begin, B end) {
    bool first = true;
    for (B i = B(begin); i != end; ++i) {
        if (!first)
            std::cout << " ";
        first = false;
        __testlib_print_one(*i);
    }
    std::cout << std::endl;
}

/* Whether T is an iterator (then println(a, b) prints the range [a, b)). */
template <class T, class Enable = void>
struct is_iterator {
    static T makeT();
    typedef void *twoptrs[2];
    static twoptrs &test(...);
    template <class R>
    static typename R::iterator_category *test(R);
    template <class R>
    static void *test(R *);
    static const bool value = sizeof(test(makeT())) == sizeof(void *);
};

template <class T>
struct is_iterator<T, typename __testlib_enable_if<std::is_array<T>::value>::type> {
    static const bool value = false;
};

inline void __tl_println_rest() { std::cout << std::endl; }

template <typename T, typename... Rest>
void __tl_println_rest(const T &t, const Rest &...rest) {
    std::cout << " ";
    __testlib_print_one(t);
    __tl_println_rest(rest...);
}

template <typename T>
void println(const T &x) {
    __testlib_print_one(x);
    std::cout << std::endl;
}

template <typename A, typename B>
typename __testlib_enable_if<!is_iterator<B>::value, void>::type println(const A &a, const B &b) {
    __testlib_print_one(a);
    __tl_println_rest(b);
}

template <typename A, typename B>
typename __testlib_enable_if<is_iterator<B>::value, void>::type println(const A &a, const B &b) {
    __println_range(a, b);
}

template <typename A>
void println(const A *a, const A *b) {
    __println_range(a, b);
}

template <>
inline void println<char>(const char *a, const char *b) {
    __testlib_print_one(a);
    __tl_println_rest(b);
}

template <typename A, typename B, typename C, typename... Rest>
void println(const A &a, const B &b, const C &c, const Rest &...rest) {
    __testlib_print_one(a);
    __tl_println_rest(b, c, rest...);
}

#endif
