// guess: the input holds a secret in [1, 100]; the contestant guesses it,
// one integer a line, and is told "<", ">" or "=". At most 7 guesses.
#include "testlib.h"
#include <iostream>

int main(int argc, char *argv[]) {
    registerInteraction(argc, argv);
    int secret = inf.readInt(1, 100, "secret");
    for (int tries = 1; tries <= 7; tries++) {
        int guess = ouf.readInt(1, 100, "guess");
        if (guess == secret) {
            std::cout << "=" << std::endl;
            tout << tries << std::endl;
            quitf(_ok, "guessed %d in %d tr%s", secret, tries, tries == 1 ? "y" : "ies");
        }
        std::cout << (guess < secret ? "<" : ">") << std::endl;
    }
    quitf(_wa, "the secret %d was not guessed in 7 tries", secret);
}
