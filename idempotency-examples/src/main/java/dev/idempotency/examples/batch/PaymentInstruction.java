package dev.idempotency.examples.batch;

import dev.idempotency.Fingerprint;
import dev.idempotency.IdempotencyKey;

/**
 * One line of the import file: move {@code amountCents} from the debtor's account to the
 * creditor's. The instruction's id is its idempotency key; its content is the fingerprint, so that
 * a file that changes an instruction under the same id is refused instead of replayed.
 *
 * @param id the instruction's id, unique in the file
 * @param debtor the account debited
 * @param creditor the account credited
 * @param amountCents the amount, in cents
 * @param currency the ISO 4217 code
 */
public record PaymentInstruction(String id, String debtor, String creditor, long amountCents, String currency) {

    /** The scope of every instruction's key. */
    public static final String SCOPE = "payment-import";

    /** The header line of the file. */
    static final String HEADER = "instruction_id,debtor,creditor,amount_cents,currency";

    /** @return the instruction's idempotency key */
    public IdempotencyKey key() {
        return IdempotencyKey.of(SCOPE, id);
    }

    /** @return the digest of what the instruction asks for */
    public Fingerprint fingerprint() {
        return Fingerprint.ofParts(debtor, creditor, amountCents, currency);
    }

    /** @return the instruction as one line of the file */
    String toCsv() {
        return id + ',' + debtor + ',' + creditor + ',' + amountCents + ',' + currency;
    }

    /**
     * @param line a line of the file, not the header
     * @return the instruction
     * @throws IllegalArgumentException if the line has not five fields
     */
    static PaymentInstruction parse(String line) {
        String[] f = line.split(",", -1);
        if (f.length != 5) {
            throw new IllegalArgumentException("an instruction has 5 fields, this line has " + f.length + ": " + line);
        }
        return new PaymentInstruction(f[0], f[1], f[2], Long.parseLong(f[3]), f[4]);
    }
}
