CREATE TABLE company (
	addresses JSON, 
	company_number VARCHAR, 
	currency VARCHAR, 
	custom_mappings JSON, 
	debtor_id VARCHAR, 
	display_name VARCHAR, 
	emails JSON, 
	legal_name VARCHAR NOT NULL, 
	phone_numbers JSON, 
	status VARCHAR, 
	subdomain VARCHAR, 
	websites JSON, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	deleted BOOLEAN, 
	updated_at VARCHAR, 
	updated_by VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE department (
	code VARCHAR, 
	custom_mappings JSON, 
	description VARCHAR, 
	name VARCHAR, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	parent_id VARCHAR, 
	updated_at VARCHAR, 
	updated_by VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE employee (
	birthday VARCHAR, 
	company_id VARCHAR, 
	company_name VARCHAR, 
	country_of_birth VARCHAR, 
	deceased_on VARCHAR, 
	deleted BOOLEAN, 
	department VARCHAR, 
	department_id VARCHAR, 
	department_name VARCHAR, 
	description VARCHAR, 
	dietary_preference VARCHAR, 
	display_name VARCHAR, 
	division VARCHAR, 
	division_id VARCHAR, 
	employee_number VARCHAR, 
	employment_end_date VARCHAR, 
	employment_start_date VARCHAR, 
	employment_status VARCHAR, 
	ethnicity VARCHAR, 
	first_name VARCHAR, 
	gender VARCHAR, 
	initials VARCHAR, 
	last_name VARCHAR, 
	leaving_reason VARCHAR, 
	marital_status VARCHAR, 
	middle_name VARCHAR, 
	photo_url VARCHAR, 
	preferred_language VARCHAR, 
	preferred_name VARCHAR, 
	pronouns VARCHAR, 
	record_url VARCHAR, 
	row_version VARCHAR, 
	salutation VARCHAR, 
	social_security_number VARCHAR, 
	source VARCHAR, 
	source_id VARCHAR, 
	tax_code VARCHAR, 
	tax_id VARCHAR, 
	timezone VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE employee_payroll (
	check_date VARCHAR, 
	company_id VARCHAR, 
	compensations JSON, 
	employee_id VARCHAR, 
	end_date VARCHAR, 
	processed BOOLEAN, 
	processed_date VARCHAR, 
	start_date VARCHAR, 
	totals JSON, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE employee_schedule (
	employee JSON, 
	schedules JSON, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE payroll (
	check_date VARCHAR, 
	company_id VARCHAR, 
	compensations JSON, 
	custom_mappings JSON, 
	end_date VARCHAR, 
	processed BOOLEAN, 
	processed_date VARCHAR, 
	start_date VARCHAR, 
	totals JSON, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE time_off_request (
	amount FLOAT, 
	approval_date VARCHAR, 
	custom_mappings JSON, 
	description VARCHAR, 
	employee_id VARCHAR, 
	end_date VARCHAR, 
	notes JSON, 
	policy_id VARCHAR, 
	request_date VARCHAR, 
	request_type VARCHAR, 
	start_date VARCHAR, 
	status VARCHAR, 
	units VARCHAR, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	updated_at VARCHAR, 
	updated_by VARCHAR, 
	PRIMARY KEY (id)
);

