CREATE TABLE card (
	card_type VARCHAR, 
	expiry_month VARCHAR, 
	expiry_year VARCHAR, 
	function VARCHAR, 
	number VARCHAR, 
	name VARCHAR, 
	profile_id VARCHAR, 
	card_id INTEGER NOT NULL, 
	PRIMARY KEY (card_id)
);

CREATE TABLE completion (
	amount FLOAT NOT NULL, 
	billing JSON, 
	card JSON, 
	comments VARCHAR, 
	custom JSON, 
	customer_ip VARCHAR, 
	language VARCHAR, 
	order_number VARCHAR, 
	payment_method VARCHAR NOT NULL, 
	payment_profile JSON, 
	shipping JSON, 
	term_url VARCHAR, 
	token JSON, 
	payment_id INTEGER, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE payment (
	amount FLOAT NOT NULL, 
	billing JSON, 
	card JSON, 
	comments VARCHAR, 
	custom JSON, 
	customer_ip VARCHAR, 
	language VARCHAR, 
	order_number VARCHAR, 
	payment_method VARCHAR NOT NULL, 
	payment_profile JSON, 
	shipping JSON, 
	term_url VARCHAR, 
	token JSON, 
	adjusted_by JSON, 
	approved BOOLEAN, 
	auth_code VARCHAR, 
	batch_number VARCHAR, 
	id FLOAT, 
	links JSON, 
	message VARCHAR, 
	message_id FLOAT, 
	total_completions FLOAT, 
	total_refunds FLOAT, 
	type VARCHAR, 
	payment_id INTEGER NOT NULL, 
	created VARCHAR, 
	PRIMARY KEY (payment_id)
);

CREATE TABLE profile (
	billing JSON, 
	card JSON, 
	comment VARCHAR, 
	custom JSON, 
	language VARCHAR, 
	token JSON, 
	account_ref VARCHAR, 
	code INTEGER, 
	customer_code VARCHAR, 
	last_transaction VARCHAR, 
	message VARCHAR, 
	profile_group VARCHAR, 
	status VARCHAR, 
	velocity_group VARCHAR, 
	id VARCHAR NOT NULL, 
	modified_date VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE report (
	criteria JSON, 
	end_date VARCHAR NOT NULL, 
	end_row FLOAT NOT NULL, 
	name VARCHAR NOT NULL, 
	start_date VARCHAR NOT NULL, 
	start_row FLOAT NOT NULL, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE return (
	amount FLOAT NOT NULL, 
	order_number VARCHAR, 
	payment_id INTEGER, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE token (
	cvd VARCHAR NOT NULL, 
	expiry_month VARCHAR NOT NULL, 
	expiry_year VARCHAR NOT NULL, 
	number VARCHAR NOT NULL, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

