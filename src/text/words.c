/* words.c: counting and splitting words with the one blank set of words.h. */
#include "text/words.h"

int text_count_words(const char *s)
{
    int n = 0;
    size_t len;
    while (text_next_word(&s, &len)) n++;
    return n;
}

int text_split_words(char *s, char **words, int max)
{
    int n = 0;
    const char *p = s;
    size_t len;
    for (const char *w; (w = text_next_word(&p, &len)); n++) {
        char *word = s + (w - s);
        if (n < max) words[n] = word;
        if (word[len]) { /* the blank after the word becomes its end */
            word[len] = 0;
            p++;
        }
    }
    return n;
}
