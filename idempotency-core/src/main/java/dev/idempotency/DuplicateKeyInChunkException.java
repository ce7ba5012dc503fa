package dev.idempotency;

/**
 * Two items of one chunk have the same key. The chunk is refused before anything is read or
 * written: deduplicate the items, or give them distinct keys.
 */
public class DuplicateKeyInChunkException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /**
     * @param key the key that appears twice
     * @param first the index of its first item
     * @param second the index of its second item
     */
    public DuplicateKeyInChunkException(IdempotencyKey key, int first, int second) {
        super(key, "items " + first + " and " + second + " of the chunk have the same key; nothing was written."
                + " Each item of a chunk needs a key of its own", null);
    }
}
