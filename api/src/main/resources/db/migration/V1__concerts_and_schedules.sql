-- Runs on MySQL 8 and MariaDB 10.11. DATETIME columns hold UTC.
CREATE TABLE concert (
    id          BIGINT        NOT NULL AUTO_INCREMENT,
    title       VARCHAR(200)  NOT NULL,
    artist      VARCHAR(200)  NOT NULL,
    venue       VARCHAR(200)  NOT NULL,
    description VARCHAR(4000) NOT NULL,
    start_date  DATE          NOT NULL,
    end_date    DATE          NOT NULL,
    created_at  DATETIME(3)   NOT NULL,
    updated_at  DATETIME(3)   NOT NULL,
    -- The list pages by id (keyset), so the primary key is the list's index.
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE schedule (
    id          BIGINT   NOT NULL AUTO_INCREMENT,
    concert_id  BIGINT   NOT NULL,
    starts_at   DATETIME NOT NULL,
    total_seats INT      NOT NULL,
    PRIMARY KEY (id),
    -- Serves "schedules of a concert by start time" without a sort, and the foreign key.
    KEY idx_schedule_concert_starts (concert_id, starts_at),
    CONSTRAINT fk_schedule_concert FOREIGN KEY (concert_id) REFERENCES concert (id) ON DELETE CASCADE,
    CONSTRAINT chk_schedule_seats CHECK (total_seats > 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
