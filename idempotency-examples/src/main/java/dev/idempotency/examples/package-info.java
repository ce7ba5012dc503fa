/** Runnable examples: the retry demonstration and the code quoted by the documentation. */
package dev.idempotency.examples;
