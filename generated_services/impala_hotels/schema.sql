CREATE TABLE booking (
	"bookedRooms" JSON, 
	cancellation JSON, 
	contact JSON, 
	"end" VARCHAR NOT NULL, 
	hotel JSON, 
	"hotelConfirmationCode" VARCHAR, 
	notes JSON, 
	"paymentBearerToken" VARCHAR, 
	"paymentClientSecret" VARCHAR, 
	start VARCHAR NOT NULL, 
	status VARCHAR, 
	"bookingContact" JSON, 
	"paymentType" VARCHAR, 
	rooms JSON, 
	"updateBookingVersionAtTimestamp" VARCHAR, 
	"bookingId" VARCHAR NOT NULL, 
	"createdAt" VARCHAR, 
	"updatedAt" VARCHAR, 
	PRIMARY KEY ("bookingId")
);

CREATE TABLE hotel (
	address JSON, 
	amenities JSON, 
	"checkIn" JSON, 
	"checkOut" JSON, 
	contractable BOOLEAN, 
	currency VARCHAR, 
	description JSON, 
	emails JSON, 
	"externalUrls" JSON, 
	images JSON, 
	location JSON, 
	name VARCHAR, 
	"phoneNumbers" JSON, 
	"roomCount" FLOAT, 
	"roomTypes" JSON, 
	"starRating" FLOAT, 
	"termsAndConditions" VARCHAR, 
	timezone VARCHAR, 
	"websiteUrl" VARCHAR, 
	"hotelId" VARCHAR NOT NULL, 
	"createdAt" VARCHAR, 
	"updatedAt" VARCHAR, 
	PRIMARY KEY ("hotelId")
);

CREATE TABLE rate_plan (
	adjustments JSON, 
	components JSON, 
	conditions JSON, 
	description VARCHAR, 
	"hotelId" VARCHAR, 
	restrictions JSON, 
	"roomTypes" JSON, 
	"ratePlanId" INTEGER NOT NULL, 
	PRIMARY KEY ("ratePlanId")
);

