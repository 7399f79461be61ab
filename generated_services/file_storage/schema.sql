CREATE TABLE drive (
	custom_mappings JSON, 
	description VARCHAR, 
	name VARCHAR NOT NULL, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	updated_at VARCHAR, 
	updated_by VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE drive_group (
	custom_mappings JSON, 
	description VARCHAR, 
	display_name VARCHAR, 
	name VARCHAR NOT NULL, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	updated_at VARCHAR, 
	updated_by VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE file (
	custom_mappings JSON, 
	description VARCHAR, 
	downloadable BOOLEAN, 
	export_formats JSON, 
	exportable BOOLEAN, 
	mime_type VARCHAR, 
	name VARCHAR, 
	parent_folders JSON, 
	parent_folders_complete BOOLEAN, 
	path VARCHAR, 
	permissions JSON, 
	size INTEGER, 
	parent_folder_id VARCHAR, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	downstream_id VARCHAR, 
	owner JSON, 
	type VARCHAR, 
	updated_at VARCHAR, 
	updated_by VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE folder (
	description VARCHAR, 
	drive_id VARCHAR, 
	name VARCHAR NOT NULL, 
	parent_folder_id VARCHAR NOT NULL, 
	custom_mappings JSON, 
	parent_folders JSON, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	created_by VARCHAR, 
	owner JSON, 
	parent_folders_complete BOOLEAN, 
	path VARCHAR, 
	size INTEGER, 
	updated_at VARCHAR, 
	updated_by VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE shared_link (
	download_url VARCHAR, 
	password VARCHAR, 
	scope VARCHAR, 
	target_id VARCHAR NOT NULL, 
	id VARCHAR NOT NULL, 
	created_at VARCHAR, 
	expires_at VARCHAR, 
	password_protected BOOLEAN, 
	target JSON, 
	updated_at VARCHAR, 
	url VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE upload_session (
	drive_id VARCHAR, 
	name VARCHAR NOT NULL, 
	parent_folder_id VARCHAR NOT NULL, 
	size INTEGER NOT NULL, 
	id VARCHAR NOT NULL, 
	expires_at VARCHAR, 
	parallel_upload_supported BOOLEAN, 
	part_size FLOAT, 
	success BOOLEAN, 
	uploaded_byte_range VARCHAR, 
	PRIMARY KEY (id)
);

