package dev.idempotency.dynamodb;

import dev.idempotency.testkit.Effort;

/**
 * The DynamoDB store passes the lease tier of the contract on dynalite in the layout of a Powertools
 * table. The layout changes only names, so its lease property runs a tenth of the sequences of the
 * library's layout, unless the deep effort is asked for.
 */
class PowertoolsLayoutContractTest extends DynamoDbContract {
    @Override
    TableLayout layout() {
        return TableLayout.POWERTOOLS;
    }

    @Override
    protected Effort effort() {
        return quickShare(10);
    }
}
