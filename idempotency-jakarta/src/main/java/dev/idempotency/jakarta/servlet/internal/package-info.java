/** Servlet plumbing shared by this project's servlet filters; exported only to them. */
@NullMarked
package dev.idempotency.jakarta.servlet.internal;

import org.jspecify.annotations.NullMarked;
