package dev.idempotency.testkit;

import dev.idempotency.IdempotencyKey;

/**
 * Keys at the limits: scopes and ids of the largest length the store declares
 * ({@link StoreLimits}), made of every character the key policy accepts (printable ASCII from
 * {@code '!'} to {@code '~'}), and their variants that differ in one character only.
 */
final class Keys {

    private Keys() {
    }

    /** The characters a key may hold: printable ASCII without the space. */
    static final String ACCEPTED = acceptedCharacters();

    private static String acceptedCharacters() {
        StringBuilder s = new StringBuilder();
        for (char c = '!'; c <= '~'; c++) {
            s.append(c);
        }
        return s.toString();
    }

    /**
     * @param length how many characters
     * @param offset where in {@link #ACCEPTED} to start
     * @return the accepted characters, from {@code offset} on and round again, {@code length} of them
     */
    static String ofLength(int length, int offset) {
        StringBuilder s = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            s.append(ACCEPTED.charAt((offset + i) % ACCEPTED.length()));
        }
        return s.toString();
    }

    /** @return {@code s} with its last letter in the other case; {@code s} itself if it has no letter */
    static String otherCase(String s) {
        for (int i = s.length() - 1; i >= 0; i--) {
            char c = s.charAt(i);
            if (Character.isLetter(c)) {
                char o = Character.isUpperCase(c) ? Character.toLowerCase(c) : Character.toUpperCase(c);
                return s.substring(0, i) + o + s.substring(i + 1);
            }
        }
        return s;
    }

    /** @return {@code s} with its last character replaced by the next accepted one */
    static String otherLast(String s) {
        char last = s.charAt(s.length() - 1);
        char next = ACCEPTED.charAt((ACCEPTED.indexOf(last) + 1) % ACCEPTED.length());
        return s.substring(0, s.length() - 1) + next;
    }

    /** @return a key as it reads in a report: a long scope or id shortened, with its length */
    static String describe(IdempotencyKey key) {
        return shorten(key.scope()) + "/" + shorten(key.id());
    }

    private static String shorten(String s) {
        return s.length() <= 16 ? s : s.substring(0, 8) + "..." + s.substring(s.length() - 4) + " (" + s.length() + " characters)";
    }
}
