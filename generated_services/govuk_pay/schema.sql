CREATE TABLE payment (
	links JSON, 
	amount INTEGER, 
	card_details JSON, 
	description VARCHAR, 
	email VARCHAR, 
	language VARCHAR, 
	metadata_ JSON, 
	reference VARCHAR, 
	refund_summary JSON, 
	settlement_summary JSON, 
	state JSON, 
	prefilled_cardholder_details JSON, 
	payment_id VARCHAR NOT NULL, 
	card_brand VARCHAR, 
	corporate_card_surcharge INTEGER, 
	created_date VARCHAR, 
	delayed_capture BOOLEAN, 
	fee INTEGER, 
	moto BOOLEAN, 
	net_amount INTEGER, 
	payment_provider VARCHAR, 
	provider_id VARCHAR, 
	return_url VARCHAR, 
	total_amount INTEGER, 
	PRIMARY KEY (payment_id)
);

CREATE TABLE refund (
	links JSON, 
	settlement_summary JSON, 
	payment_id VARCHAR, 
	refund_id VARCHAR NOT NULL, 
	amount INTEGER, 
	created_date VARCHAR, 
	status VARCHAR, 
	PRIMARY KEY (refund_id)
);

