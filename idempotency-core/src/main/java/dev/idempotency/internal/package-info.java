/** Implementation details. Not an API: anything here may change in any release. */
package dev.idempotency.internal;
