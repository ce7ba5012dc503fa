package dev.idempotency.spring;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A payment row written through JPA by the work of the tests. */
@Entity
@Table(name = "spring_payment")
public class PaymentEntity {

    @Id
    private String id;

    private long cents;

    protected PaymentEntity() {
    }

    PaymentEntity(String id, long cents) {
        this.id = id;
        this.cents = cents;
    }

    String id() {
        return id;
    }

    long cents() {
        return cents;
    }
}
