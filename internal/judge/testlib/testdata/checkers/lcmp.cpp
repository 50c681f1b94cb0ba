// lcmp: line by line, the tokens of each line (spaces between them aside).
#include "testlib.h"

static std::vector<std::string> words(const std::string &line) { return tokenize(line, " \t"); }

int main(int argc, char *argv[]) {
    setName("lines of tokens");
    registerTestlibCmd(argc, argv);
    int line = 0;
    while (!ans.eof()) {
        line++;
        std::string want = ans.readLine();
        if (ouf.eof() && !trim(want).empty())
            quitf(_wa, "line %d is missing", line);
        std::string got = ouf.eof() ? "" : ouf.readLine();
        if (words(want) != words(got))
            quitf(_wa, "line %d differs - expected: '%s', found: '%s'", line, compress(want).c_str(), compress(got).c_str());
    }
    quitf(_ok, "%d line(s)", line);
}
